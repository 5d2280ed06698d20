"""extract_product.find's union prefilter must never hide a product one of the patterns names."""

from markmem.write import extract_product as ep

TEXTS = [
    "I'm on a Fairphone 5 now", "my Pixel 9 overheats", "swapped my pixel 8 for an iPhone 16",
    "we drive a Toyota Corolla", "the Golf died", "my golf swing is off", "got a Steam Deck",
    "I use a macbook air", "my Kindle Paperwhite broke", "ok sounds good", "I live in Lisbon", "",
    "RAV4 and a galaxy tab s9", "apple watch ultra on my wrist", "FAIRPHONE 4",
]


def _slow(text: str) -> bool:
    return any(p.search(text) for _s, p, _m in ep.PRODUCTS)


def test_union_agrees_with_each_pattern() -> None:
    for text in TEXTS:
        for t in (text, text.lower(), text.upper()):
            assert bool(ep._ANY.search(t)) == _slow(t), t


def test_find_still_names_products() -> None:
    assert [x[:2] for x in ep.find("swapped my Pixel 8 for an iPhone 16")] == [
        ("phone_model", "Pixel 8"), ("phone_model", "iPhone 16")]
    assert ep.find("ok sounds good") == []
