"""Writes bench/data/facts_tune4.jsonl: a fourth tuning set (issue #12), longer chats with assistant
echoes, chit-chat and other people's mentions of the old values."""
import json
import sys

OUT = []


def sc(sid, cat, sessions, checks):
    turns = []
    for sess in sessions:
        day, msgs = sess[0], sess[1]
        user = sess[2] if len(sess) > 2 else "u1"
        for role, text in msgs:  # one session, one time: one add()
            turns.append({"user_id": f"t4-{sid}-{user}", "role": "user" if role == "u" else "assistant",
                          "content": text, "occurred_at": f"{day}T09:00:00Z"})
    out_checks = []
    for ch in checks:
        q, expect, stale = ch[0], ch[1], ch[2]
        opts = ch[3] if len(ch) > 3 else {}
        out_checks.append({"subject": opts.get("subject", "user"), "query": q, "expect": expect, "stale": stale,
                           "at": opts.get("at"), "kind": opts.get("kind", "current"),
                           "user_id": f"t4-{sid}-{opts.get('user', 'u1')}"})
    OUT.append({"id": f"t4-{sid}", "category": cat, "turns": turns, "checks": out_checks})


# ---------------------------------------------------------------- move
sc("move-01", "move", [
    ("2026-01-12", [("u", "I live in Bruges and the canals freeze over some winters."),
                    ("a", "Bruges in winter sounds magical! Do you skate on the canals?"),
                    ("u", "haha no, too scared")]),
    ("2026-02-03", [("u", "ok thanks"), ("a", "You're welcome!")]),
    ("2026-07-20", [("u", "We finally moved to Ghent last month, the flat is tiny but bright."),
                    ("a", "Congratulations on the move to Ghent!")]),
], [("Where does the user live?", ["ghent"], ["bruges"]),
    ("Where did the user live in March?", ["bruges"], ["ghent"], {"at": "2026-03-01T10:00:00Z", "kind": "as_of"})])

sc("move-02", "move", [
    ("2026-02-01", [("u", "I'm based in Kraków, working remotely."),
                    ("a", "Kraków has a great remote-work scene. Any coworking spaces you like?")]),
    ("2026-02-02", [("u", "My friend Ola keeps telling me Kraków is too touristy, lol")]),
    ("2026-09-09", [("u", "Home is Wrocław now, we signed the lease in August."),
                    ("a", "How are you finding Wrocław compared to Kraków?"),
                    ("u", "quieter, I like it")]),
], [("Which city is the user based in?", ["wrocław", "wroclaw"], ["kraków", "krakow"])])

sc("move-03", "move", [
    ("2026-03-05", [("u", "Our place in Hobart has a view of Mount Wellington."),
                    ("u", "I live in Hobart with my partner and two cats.")]),
    ("2026-03-06", [("a", "Hobart is a lovely city. Would you like walking routes near Mount Wellington?")]),
    ("2026-10-11", [("u", "Moved up to Brisbane for the warmth, no regrets."),
                    ("a", "Brisbane is certainly warmer! Anything you miss about Hobart?"),
                    ("u", "the mountain, mostly")]),
], [("Where does the user live now?", ["brisbane"], ["hobart"])])

sc("move-04", "move", [
    ("2026-01-15", [("u", "I'm in Eindhoven, near the university."),
                    ("a", "Nice, Eindhoven has a strong design scene.")]),
    ("2026-05-15", [("u", "lol my cousin thinks Eindhoven is boring"),
                    ("a", "Every city has its fans and critics!")]),
    ("2026-08-30", [("u", "I've relocated to Rotterdam for good, the Eindhoven chapter is closed."),
                    ("u", "any good bakeries in Rotterdam?"),
                    ("a", "Try the Markthal for a start.")]),
], [("What city does the user live in?", ["rotterdam"], ["eindhoven"])])

# ---------------------------------------------------------------- job
sc("job-01", "job", [
    ("2026-01-20", [("u", "I work as a sous chef at Maison Verte."),
                    ("a", "Being a sous chef at Maison Verte must be intense. What's your signature dish?"),
                    ("u", "duck confit")]),
    ("2026-06-02", [("u", "Big news: I left Maison Verte and I'm now head chef at Osteria Lume."),
                    ("a", "Congratulations, head chef at Osteria Lume is a big step!")]),
], [("Where does the user work?", ["osteria lume"], ["maison verte"]),
    ("What is the user's job?", ["head chef"], ["sous chef"])])

sc("job-02", "job", [
    ("2026-02-10", [("u", "I'm a data analyst at Fernhill Insurance."),
                    ("a", "Insurance data can be fascinating. Do you use SQL a lot at Fernhill?"),
                    ("u", "all day every day")]),
    ("2026-04-01", [("u", "sounds good"), ("a", "Great!")]),
    ("2026-09-15", [("u", "Just accepted an offer from Quillbyte, I start there as a data engineer next week."),
                    ("u", "Today was my last day at Fernhill.")]),
], [("Which company does the user work for?", ["quillbyte"], ["fernhill"],
     {"at": "2026-10-15T10:00:00Z"})])

sc("job-03", "job", [
    ("2026-03-03", [("u", "I drive a delivery van for Parcelwise."),
                    ("a", "Long days on the road! Do you get to choose your routes at Parcelwise?")]),
    ("2026-08-08", [("u", "I quit Parcelwise. Now I'm a driving instructor, self-employed."),
                    ("a", "Being a driving instructor sounds rewarding.")]),
], [("What does the user do for work?", ["driving instructor"], ["parcelwise", "delivery van"])])

sc("job-04", "job", [
    ("2026-01-05", [("u", "I teach piano at a music school in Cardiff."),
                    ("a", "Teaching piano is lovely. How many students do you have?"),
                    ("u", "about twenty")]),
    ("2026-02-05", [("a", "How are your piano students getting on?"), ("u", "fine thanks")]),
    ("2026-10-05", [("u", "I stopped teaching piano in the summer; I'm a sound engineer at a studio now."),
                    ("a", "What a change! Do you miss teaching?")]),
], [("What is the user's job?", ["sound engineer"], ["piano"])])

# ---------------------------------------------------------------- correction
sc("corr-01", "correction", [
    ("2026-04-04", [("u", "My dentist appointment is on Wednesday."),
                    ("a", "Noted, Wednesday for the dentist."),
                    ("u", "sorry, I meant Friday, not Wednesday")]),
], [("When is the user's dentist appointment?", ["friday"], ["wednesday"])])

sc("corr-02", "correction", [
    ("2026-05-01", [("u", "I grew up in Lisburn."), ("a", "Lisburn, in Northern Ireland?"),
                    ("u", "no wait, it was Lurgan, I always mix them up")]),
], [("Where did the user grow up?", ["lurgan"], ["lisburn"])])

sc("corr-03", "correction", [
    ("2026-02-14", [("u", "My daughter is seven."),
                    ("a", "Seven is such a fun age!")]),
    ("2026-02-15", [("u", "Correction: my daughter is eight, she had her birthday last week.")]),
], [("How old is the user's daughter?", ["eight"], ["seven"], {"subject": "daughter"})])

sc("corr-04", "correction", [
    ("2026-06-06", [("u", "My car is a Honda Jazz."),
                    ("a", "The Jazz is famously reliable.")]),
    ("2026-06-07", [("u", "Actually it's a Honda Civic, the Jazz was my old one.")]),
], [("What car does the user drive?", ["civic"], ["jazz"])])

# ---------------------------------------------------------------- negation
sc("neg-01", "negation", [
    ("2026-01-01", [("u", "I'm a vegan, have been for three years."),
                    ("a", "Here are some vegan recipes you might like.")]),
    ("2026-07-07", [("u", "I'm not vegan anymore, I eat fish again."),
                    ("a", "Thanks for letting me know.")]),
], [("What is the user's diet?", [], ["vegan"])])

sc("neg-02", "negation", [
    ("2026-02-02", [("u", "I smoke about five cigarettes a day."),
                    ("a", "Have you thought about cutting down?")]),
    ("2026-09-01", [("u", "I quit smoking in June, three months clean!"),
                    ("a", "That's fantastic, well done!")]),
], [("Does the user smoke?", [], ["five cigarettes"])])

sc("neg-03", "negation", [
    ("2026-03-03", [("u", "I have a hamster called Biscuit."),
                    ("a", "Biscuit is a cute name for a hamster!")]),
    ("2026-08-08", [("u", "Biscuit died last night, I'm a bit sad."),
                    ("a", "I'm so sorry about Biscuit.")]),
], [("What pets does the user have?", [], ["biscuit"])])

sc("neg-04", "negation", [
    ("2026-01-10", [("u", "I play in a five-a-side football team on Mondays.")]),
    ("2026-06-10", [("u", "I don't play football anymore, my knee is wrecked."),
                    ("a", "Sorry to hear about your knee. Swimming might be gentler.")]),
], [("Does the user play football?", [], ["five-a-side"])])

# ---------------------------------------------------------------- temporary
sc("temp-01", "temporary", [
    ("2026-01-03", [("u", "I live in Oslo."), ("a", "Oslo is beautiful in winter.")]),
    ("2026-07-01", [("u", "This month I'm in Tromsø for a work project, back in Oslo in August."),
                    ("a", "Enjoy the midnight sun in Tromsø!")]),
], [("Where does the user live?", ["oslo"], ["tromsø", "tromso"]),
    ("Where is the user staying right now?", ["tromsø", "tromso"], [], {"at": "2026-07-15T10:00:00Z"})])

sc("temp-02", "temporary", [
    ("2026-02-01", [("u", "I work at the Leeds office of Norland Bank.")]),
    ("2026-05-04", [("u", "For the next two weeks I'm covering the York branch."),
                    ("a", "Hope the York commute isn't too bad.")]),
], [("Which office does the user work at?", ["leeds"], ["york"], {"at": "2026-07-01T10:00:00Z"})])

sc("temp-03", "temporary", [
    ("2026-03-01", [("u", "I drive a Skoda Octavia.")]),
    ("2026-04-10", [("u", "my Skoda is in the garage so I'm driving a rental Fiat this week"),
                    ("a", "Hope the repairs go smoothly.")]),
], [("What car does the user drive?", ["skoda", "octavia"], ["fiat"], {"at": "2026-06-01T10:00:00Z"})])

# ---------------------------------------------------------------- future
sc("fut-01", "future", [
    ("2026-01-10", [("u", "I live in Turin."), ("a", "Turin has wonderful coffee.")]),
    ("2026-02-01", [("u", "From March 1st I'll be living in Bologna, the new job starts then."),
                    ("a", "Exciting! Bologna is a great food city.")]),
], [("Where does the user live?", ["bologna"], ["turin"]),
    ("Where did the user live in mid February?", ["turin"], ["bologna"],
     {"at": "2026-02-15T10:00:00Z", "kind": "as_of"})])

sc("fut-02", "future", [
    ("2026-04-01", [("u", "I work at Brightside Dental as a receptionist.")]),
    ("2026-04-20", [("u", "Starting next month I'll work at Cedar Clinic instead."),
                    ("a", "Good luck at Cedar Clinic!")]),
], [("Where does the user work?", ["brightside"], ["cedar clinic"], {"at": "2026-04-25T10:00:00Z"}),
    ("Where does the user work?", ["cedar clinic"], ["brightside"])])

sc("fut-03", "future", [
    ("2026-05-05", [("u", "My gym is PureFit on King Street.")]),
    ("2026-06-01", [("u", "I'm switching to Iron Yard gym from July, PureFit got too crowded."),
                    ("a", "Iron Yard has good reviews.")]),
], [("Which gym does the user go to?", ["iron yard"], ["purefit"]),
    ("Which gym did the user go to in mid June?", ["purefit"], ["iron yard"],
     {"at": "2026-06-15T10:00:00Z", "kind": "as_of"})])

sc("fut-04", "future", [
    ("2026-08-01", [("u", "I'm a primary school teacher.")]),
    ("2026-08-10", [("u", "In September I start a new job as a school librarian."),
                    ("a", "A school librarian, how lovely.")]),
], [("What is the user's job?", ["librarian"], ["primary school teacher"])])

# ---------------------------------------------------------------- third party
sc("third-01", "third_party", [
    ("2026-02-02", [("u", "I live in Bath."), ("a", "Bath is gorgeous.")]),
    ("2026-05-05", [("u", "My brother lives in Swindon and hates the roundabouts."),
                    ("a", "Swindon is famous for its Magic Roundabout!")]),
], [("Where does the user live?", ["bath"], ["swindon"]),
    ("Where does the user's brother live?", ["swindon"], [], {"subject": "brother"})])

sc("third-02", "third_party", [
    ("2026-01-01", [("u", "I work at Hollis Books as a buyer.")]),
    ("2026-03-03", [("u", "My wife just got a job at Marlow Press."),
                    ("a", "Congratulations to your wife on Marlow Press!")]),
], [("Where does the user work?", ["hollis"], ["marlow"]),
    ("Where does the user's wife work?", ["marlow"], [], {"subject": "wife"})])

sc("third-03", "third_party", [
    ("2026-02-20", [("u", "I'm vegetarian.")]),
    ("2026-04-20", [("u", "My flatmate Jess eats meat with every meal, it's wild."),
                    ("a", "Sharing a kitchen with different diets can be tricky.")]),
], [("What is the user's diet?", ["vegetarian"], [])])

sc("third-04", "third_party", [
    ("2026-01-15", [("u", "I live in Galway."), ("a", "Galway is lovely.")]),
    ("2026-03-10", [("u", "My mum moved to Limerick to be near her sister."),
                    ("a", "Limerick is not too far from Galway.")]),
    ("2026-09-10", [("u", "I've moved to Dublin for work now.")]),
], [("Where does the user live?", ["dublin"], ["galway", "limerick"]),
    ("Where does the user's mum live?", ["limerick"], [], {"subject": "mum"})])

# ---------------------------------------------------------------- hypothetical
sc("hyp-01", "hypothetical", [
    ("2026-02-02", [("u", "I live in Leipzig.")]),
    ("2026-06-06", [("u", "If I got the Berlin job, would it be worth moving to Berlin?"),
                    ("a", "Berlin is bigger and pricier than Leipzig; it depends on the salary.")]),
], [("Where does the user live?", ["leipzig"], ["berlin"])])

sc("hyp-02", "hypothetical", [
    ("2026-03-03", [("u", "I drive a Ford Focus.")]),
    ("2026-07-07", [("u", "should I get a Tesla Model 3 next year?"),
                    ("a", "A Tesla Model 3 is good if you can charge at home.")]),
], [("What car does the user drive?", ["ford focus", "focus"], ["tesla"])])

sc("hyp-03", "hypothetical", [
    ("2026-01-10", [("u", "I'm an accountant at Pemberton & Co.")]),
    ("2026-05-10", [("u", "maybe I'll become a yoga instructor one day, who knows"),
                    ("a", "Yoga instructor is a popular second career.")]),
], [("What is the user's job?", ["accountant"], ["yoga instructor"])])

# ---------------------------------------------------------------- repeat
sc("rep-01", "repeat", [
    ("2026-01-01", [("u", "I live in Cádiz."), ("a", "Cádiz is so sunny.")]),
    ("2026-04-01", [("u", "still in Cádiz, still sunny")]),
    ("2026-09-01", [("u", "I live in Cádiz, as I said before.")]),
], [("Where does the user live?", ["cádiz", "cadiz"], [])])

sc("rep-02", "repeat", [
    ("2026-02-01", [("u", "I'm a pharmacist.")]),
    ("2026-08-01", [("u", "as a pharmacist I get asked this all the time"),
                    ("a", "Pharmacists are very trusted!")]),
], [("What is the user's job?", ["pharmacist"], [])])

sc("rep-03", "repeat", [
    ("2026-01-20", [("u", "My favourite food is ramen.")]),
    ("2026-05-20", [("u", "ramen is still my favourite food, I had it twice this week")]),
], [("What is the user's favourite food?", ["ramen"], [])])

# ---------------------------------------------------------------- paraphrase
sc("para-01", "paraphrase", [
    ("2026-01-01", [("u", "I'm a mechanic at a garage in Derby.")]),
    ("2026-07-01", [("u", "These days I earn my living as an electrician."),
                    ("a", "Electricians are always in demand.")]),
], [("What does the user do for a living?", ["electrician"], ["mechanic"])])

sc("para-02", "paraphrase", [
    ("2026-02-02", [("u", "Home is Malmö for now.")]),
    ("2026-08-08", [("u", "I've set up home in Lund, it's a short train from Malmö."),
                    ("a", "Lund is a lovely university town.")]),
], [("Where does the user live?", ["lund"], ["malmö", "malmo"])])

sc("para-03", "paraphrase", [
    ("2026-03-01", [("u", "I'm employed by Tavistock Hotels in their marketing team.")]),
    ("2026-09-01", [("u", "I'm on the payroll at Greenway Travel now, doing marketing again.")]),
], [("Who does the user work for?", ["greenway"], ["tavistock"])])

sc("para-04", "paraphrase", [
    ("2026-01-01", [("u", "I own a golden retriever named Sunny.")]),
    ("2026-06-01", [("u", "We adopted a second dog, a beagle called Pip."),
                    ("a", "Sunny must love having a friend!")]),
], [("What dogs does the user have?", ["sunny"], []),
    ("What is the user's beagle called?", ["pip"], [])])

# ---------------------------------------------------------------- long gap
sc("gap-01", "long_gap", [
    ("2024-11-01", [("u", "I live in Halifax, Nova Scotia."), ("a", "Halifax has a great harbour.")]),
    ("2025-03-01", [("u", "thanks!")]),
    ("2026-10-01", [("u", "Been living in Vancouver for a year now, the rain is real."),
                    ("a", "Vancouver does get a lot of rain.")]),
], [("Where does the user live?", ["vancouver"], ["halifax"])])

sc("gap-02", "long_gap", [
    ("2024-06-01", [("u", "I work at Kestrel Labs as a chemist.")]),
    ("2026-11-01", [("u", "I've been at Orion Pharma for ages now, running their QA lab."),
                    ("a", "QA at Orion Pharma sounds like a big responsibility.")]),
], [("Where does the user work?", ["orion"], ["kestrel"])])

sc("gap-03", "long_gap", [
    ("2025-01-01", [("u", "My partner is called Marco.")]),
    ("2026-09-20", [("u", "My girlfriend Lena and I are going to Rome next month."),
                    ("u", "Marco and I broke up ages ago.")]),
], [("Who is the user's partner?", ["lena"], ["marco"])])

# ---------------------------------------------------------------- multi value
sc("multi-01", "multi_value", [
    ("2026-01-01", [("u", "I have a cat named Olive.")]),
    ("2026-05-05", [("u", "We got a rabbit called Clover too!"),
                    ("a", "How are Olive and Clover getting along?")]),
], [("What pets does the user have?", ["olive"], []),
    ("What is the name of the user's rabbit?", ["clover"], [])])

sc("multi-02", "multi_value", [
    ("2026-02-01", [("u", "I speak French and Italian.")]),
    ("2026-07-01", [("u", "I'm learning Korean now, it's hard.")]),
], [("Which languages does the user speak?", ["french", "italian"], []),
    ("What language is the user learning?", ["korean"], [])])

sc("multi-03", "multi_value", [
    ("2026-01-01", [("u", "My hobbies are climbing and knitting.")]),
    ("2026-06-01", [("u", "I've taken up pottery as well.")]),
], [("What are the user's hobbies?", ["climbing", "knitting"], []),
    ("What new hobby did the user take up?", ["pottery"], [])])

# ---------------------------------------------------------------- two facts
sc("two-01", "two_facts", [
    ("2026-03-03", [("u", "I'm a midwife and I live in Exeter."), ("a", "Midwifery is such important work.")]),
], [("What is the user's job?", ["midwife"], []), ("Where does the user live?", ["exeter"], [])])

sc("two-02", "two_facts", [
    ("2026-04-04", [("u", "I work at Brambles Café and my dog is called Pepper.")]),
], [("Where does the user work?", ["brambles"], []), ("What is the user's dog called?", ["pepper"], [])])

sc("two-03", "two_facts", [
    ("2026-01-01", [("u", "I live in Zurich and I prefer aisle seats on planes.")]),
    ("2026-06-01", [("u", "I now prefer window seats, and I still live in Zurich.")]),
], [("Which seat does the user prefer on planes?", ["window"], ["aisle"]),
    ("Where does the user live?", ["zurich"], [])])

sc("two-04", "two_facts", [
    ("2026-02-02", [("u", "I'm a firefighter, and my wife is a nurse.")]),
], [("What is the user's job?", ["firefighter"], ["nurse"])])

# ---------------------------------------------------------------- change back
sc("back-01", "change_back", [
    ("2026-01-01", [("u", "I drink oat milk in my coffee.")]),
    ("2026-04-01", [("u", "I switched to almond milk.")]),
    ("2026-09-01", [("u", "I'm back on oat milk, almond was too thin."),
                    ("a", "Oat milk does froth better.")]),
], [("What milk does the user have in coffee?", ["oat"], ["almond"])])

sc("back-02", "change_back", [
    ("2026-01-01", [("u", "I live in Cork.")]),
    ("2026-04-01", [("u", "I moved to Kilkenny.")]),
    ("2026-10-01", [("u", "I moved back to Cork, Kilkenny didn't work out."),
                    ("a", "Welcome back to Cork!")]),
], [("Where does the user live?", ["cork"], ["kilkenny"])])

sc("back-03", "change_back", [
    ("2026-01-01", [("u", "I work the early shift.")]),
    ("2026-03-01", [("u", "I'm on the night shift now, it's rough.")]),
    ("2026-08-01", [("u", "Finally back on the early shift!")]),
], [("Which shift does the user work?", ["early"], ["night"])])

# ---------------------------------------------------------------- cross user
sc("xu-01", "cross_user", [
    ("2026-02-02", [("u", "I live in Aarhus.")], "u1"),
    ("2026-05-05", [("u", "I moved to Odense last month.")], "u2"),
], [("Where does the user live?", ["aarhus"], ["odense"], {"user": "u1"}),
    ("Where does the user live?", ["odense"], ["aarhus"], {"user": "u2"})])

sc("xu-02", "cross_user", [
    ("2026-01-01", [("u", "I'm a plumber.")], "u1"),
    ("2026-03-01", [("u", "I'm a locksmith now.")], "u2"),
], [("What is the user's job?", ["plumber"], ["locksmith"], {"user": "u1"})])

sc("xu-03", "cross_user", [
    ("2026-01-01", [("u", "My cat is called Mochi.")], "u1"),
    ("2026-02-01", [("u", "My cat is called Tofu.")], "u2"),
], [("What is the user's cat called?", ["mochi"], ["tofu"], {"user": "u1"}),
    ("What is the user's cat called?", ["tofu"], ["mochi"], {"user": "u2"})])

# ---------------------------------------------------------------- assistant
sc("asst-01", "assistant", [
    ("2026-03-03", [("u", "I live in Porto."),
                    ("a", "Porto is lovely. Have you ever considered living in Lisbon? Lisbon has more jobs.")]),
    ("2026-04-04", [("a", "Many people in your field relocate to Lisbon.")]),
], [("Where does the user live?", ["porto"], ["lisbon"])])

sc("asst-02", "assistant", [
    ("2026-01-01", [("u", "I work at Redwood Games as an artist.")]),
    ("2026-02-01", [("a", "You mentioned you work at Bluefin Studios, right?"),
                    ("u", "no, Redwood Games.")]),
], [("Where does the user work?", ["redwood"], ["bluefin"])])

sc("asst-03", "assistant", [
    ("2026-05-01", [("u", "I'm allergic to peanuts."),
                    ("a", "I'm a language model so I don't have allergies, but shellfish allergies are common too.")]),
], [("What is the user allergic to?", ["peanut", "peanuts"], ["shellfish"])])

sc("asst-04", "assistant", [
    ("2026-02-02", [("u", "I used to live in Nice but I'm in Marseille now."),
                    ("a", "Nice and Marseille are both on the coast. Do you miss Nice?"),
                    ("u", "a bit")]),
    ("2026-02-10", [("a", "Since you're in Nice, you might enjoy the Promenade des Anglais.")]),
], [("Where does the user live?", ["marseille"], ["nice"])])

# ---------------------------------------------------------------- open slot
sc("open-01", "open_slot", [
    ("2026-01-01", [("u", "my favourite colour is teal")]),
    ("2026-08-01", [("u", "my favourite colour these days is mustard yellow"),
                    ("a", "Mustard yellow is very on trend.")]),
], [("What is the user's favourite colour?", ["mustard"], ["teal"])])

sc("open-02", "open_slot", [
    ("2026-02-02", [("u", "my go-to karaoke song is Dancing Queen")]),
    ("2026-07-07", [("u", "my go-to karaoke song is now Mr Brightside, Dancing Queen got old")]),
], [("What is the user's go-to karaoke song?", ["mr brightside", "brightside"], ["dancing queen"])])

sc("open-03", "open_slot", [
    ("2026-03-03", [("u", "My phone is a Pixel 6.")]),
    ("2026-09-09", [("u", "Got a new phone, an iPhone 15, the Pixel's battery died."),
                    ("a", "The iPhone 15 has a great camera.")]),
], [("What phone does the user have?", ["iphone"], ["pixel"])])

sc("open-04", "open_slot", [
    ("2026-01-01", [("u", "My favourite author is Ursula K. Le Guin.")]),
    ("2026-04-01", [("a", "Have you read any Le Guin lately?"), ("u", "not lately, no")]),
], [("Who is the user's favourite author?", ["le guin"], [])])

# ---------------------------------------------------------------- routine
sc("rout-01", "routine", [
    ("2026-01-01", [("u", "I go swimming on Monday mornings.")]),
    ("2026-05-01", [("u", "Swimming is on Wednesday mornings now, the pool changed its hours."),
                    ("a", "Wednesday mornings it is!")]),
], [("When does the user go swimming?", ["wednesday"], ["monday"])])

sc("rout-02", "routine", [
    ("2026-02-02", [("u", "I wake up at 6am every day for work.")]),
    ("2026-09-09", [("u", "Since the new job I get up at 7:30 instead."),
                    ("a", "An extra hour and a half of sleep!")]),
], [("What time does the user wake up?", ["7:30"], ["6am"])])

sc("rout-03", "routine", [
    ("2026-03-03", [("u", "Book club meets every second Thursday.")]),
    ("2026-07-07", [("u", "Book club moved to the first Sunday of the month.")]),
], [("When does the user's book club meet?", ["sunday"], ["thursday"])])

sc("rout-04", "routine", [
    ("2026-01-10", [("u", "I work from home on Fridays.")]),
    ("2026-06-10", [("u", "My home-working day is Tuesday now, Fridays are in the office."),
                    ("a", "Got it, Tuesdays at home.")]),
], [("Which day does the user work from home?", ["tuesday"], ["friday", "fridays"])])

# ---------------------------------------------------------------- more moves/jobs with chit-chat
sc("move-05", "move", [
    ("2026-01-01", [("u", "I live in Tallinn."), ("a", "Tallinn's old town is beautiful.")]),
    ("2026-01-02", [("u", "haha yes"), ("u", "ok"), ("a", "Anything else?")]),
    ("2026-06-06", [("u", "I moved to Riga in May."), ("u", "my old neighbours in Tallinn still text me")]),
], [("Where does the user live?", ["riga"], ["tallinn"])])

sc("job-05", "job", [
    ("2026-02-02", [("u", "I'm a copywriter at Inkwell Agency.")]),
    ("2026-03-03", [("u", "Inkwell Agency has a great Christmas party lol")]),
    ("2026-10-10", [("u", "I went freelance in September, no more Inkwell."),
                    ("a", "Freelancing gives you so much freedom.")]),
], [("Where does the user work?", ["freelance"], ["inkwell"])])

sc("neg-05", "negation", [
    ("2026-01-01", [("u", "I'm married to Tom.")]),
    ("2026-09-01", [("u", "Tom and I divorced this summer."), ("a", "I'm sorry, that must be hard.")]),
], [("Who is the user married to?", [], ["tom"])])

sc("corr-05", "correction", [
    ("2026-03-10", [("u", "My flight to Athens is on the 14th."),
                    ("a", "Have a great trip to Athens on the 14th!"),
                    ("u", "oops, it's the 16th, not the 14th")]),
], [("When is the user's flight to Athens?", ["16th"], ["14th"])])

sc("temp-04", "temporary", [
    ("2026-01-01", [("u", "I'm vegetarian.")]),
    ("2026-06-01", [("u", "I'm doing a juice cleanse this week, so only juices until Sunday."),
                    ("a", "Stay hydrated!")]),
], [("What is the user's diet?", ["vegetarian"], ["juice"], {"at": "2026-08-01T10:00:00Z"})])

sc("third-05", "third_party", [
    ("2026-02-02", [("u", "I'm a software developer at Nimbus.")]),
    ("2026-04-04", [("u", "Ahmed from my team just left Nimbus for Stratus."),
                    ("a", "Stratus is a big name, good for Ahmed.")]),
], [("Where does the user work?", ["nimbus"], ["stratus"])])

sc("hyp-04", "hypothetical", [
    ("2026-01-01", [("u", "I live in Bilbao.")]),
    ("2026-05-01", [("u", "What would it cost to rent a flat in Madrid?"),
                    ("a", "A one-bedroom in central Madrid is around 1,200 euros a month.")]),
], [("Where does the user live?", ["bilbao"], ["madrid"])])


def main() -> None:
    path = sys.argv[1]
    with open(path, "w", encoding="utf-8") as fh:
        for row in OUT:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(OUT), "scenarios", sum(len(r["checks"]) for r in OUT), "checks", Counter(r["category"] for r in OUT))


main()
