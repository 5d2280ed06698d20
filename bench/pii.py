"""Benchmark the PII scanners on the add() hot path.

Per scanner: latency of ``analyze_batch([one 30-word message])`` (p50/p95 over 300 calls after
a warm-up, in ms) and throughput of one ``analyze_batch`` call on 1,000 messages (messages/s).

    python bench/pii.py            (markmem importable: installed, or PYTHONPATH=.)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from markmem.adapters.presidio import PresidioScanner
from markmem.ports import PiiFinding, PiiScanner
from markmem.write.regex_pii import RegexScanner

PLAIN = (
    "Hi, I moved here last month and I am looking for a quiet vegetarian restaurant "
    "near the office; please remember that I prefer aisle seats when flying with my kids."
)
WITH_PII = (
    "Hi, this is Maria Gonzalez from Madrid; please email maria@example.com or call "
    "415-555-0132 about the booking, and remember I prefer aisle seats on long flights "
    "to Boston with my kids."
)
TEMPLATES = [
    PLAIN,
    WITH_PII,
    "My card is 4111 1111 1111 {n:04d} and my ssn is 123-45-{n:04d}, keep it safe please.",
    "I have {n} cats and 2 dogs, the meeting is at 10:30 and I like jazz a lot.",
    "Send the invoice to DE89 3704 0044 0532 0130 00 and cc ops{n}@example.org, thanks.",
]
LATENCY_CALLS = 300
WARM_UP_CALLS = 30
BATCH = 1000


def latency_ms(scan: Callable[[Sequence[str]], list[list[PiiFinding]]], text: str) -> list[float]:
    for _ in range(WARM_UP_CALLS):
        scan([text])
    samples = []
    for _ in range(LATENCY_CALLS):
        start = time.perf_counter()
        scan([text])
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def throughput(scanner: PiiScanner, texts: list[str]) -> float:
    scanner.analyze_batch(texts[:50])
    start = time.perf_counter()
    results = scanner.analyze_batch(texts)
    elapsed = time.perf_counter() - start
    assert len(results) == len(texts)
    return len(texts) / elapsed


def report(scanner: PiiScanner, texts: list[str]) -> None:
    for label, message in (("plain", PLAIN), ("with PII", WITH_PII)):
        samples = latency_ms(scanner.analyze_batch, message)
        print(
            f"{scanner.name:>8}  1 msg ({len(message.split())} words, {label:<8}): "
            f"p50 {percentile(samples, 50):7.3f} ms   p95 {percentile(samples, 95):7.3f} ms"
        )
    rate = throughput(scanner, texts)
    print(f"{scanner.name:>8}  {len(texts)} msgs in one batch call: {rate:10,.0f} msgs/s")


def main() -> None:
    texts = [TEMPLATES[i % len(TEMPLATES)].format(n=i) for i in range(BATCH)]
    start = time.perf_counter()
    presidio = PresidioScanner()
    print(f"presidio engine load ({presidio.spacy_model}): {time.perf_counter() - start:.2f} s")
    report(presidio, texts)
    report(RegexScanner(), texts)


if __name__ == "__main__":
    main()
