"""The heuristic extractor's tables: first-person patterns, negations, closers and word lists.

Every rule is ``(regex, predicate, page type, multi-valued, confidence)``; the regex has a ``v``
group (the value) and may have ``k`` (a kind: "favorite <k>", "my <k> is"), ``bare`` (a bare
"I'm a <noun>": kept only when the noun reads as a job) or ``name`` (the value must look like a
name). Patterns see one clause, already normalised ("im" -> "i'm", curly quotes straightened).
"""

from __future__ import annotations

import re
from typing import Any

Rule = tuple[re.Pattern[str], str, str, bool, float]

_A = r"(?:(?:now|currently|still|also|just|recently|finally|actually|really|already|even|officially|mostly|fully|strictly|basically|technically|definitely|happily|legally|newly|permanently|temporarily) )*"  # noqa: E501
_V = r"(?P<v>(?:[^,;!?.]|\.(?=\S))+?)"  # up to punctuation ("." inside a token is kept: St.Louis, a.b@c.d)
_END = (r"(?=\s*(?:[,;!?]|\.(?:\s|$)|\band\b|\bbut\b|\bbecause\b|\bso\b|\bwhich\b|\bwho\b|\bwhere\b|\bthat\b|"
        r"\bas well\b|\btoo\b|\bsince\b|$))")
_I = r"\bi"
_IM = r"\bi(?:'m| am)"
_WE = r"\b(?:i|we)"
PHONE = r"(?P<v>\+?\(?\d[\d ().-]{5,}\d|<PHONE_NUMBER>)"
EMAIL = r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|<EMAIL_ADDRESS>)"

JOBS = frozenset((
    "engineer developer teacher nurse doctor designer manager writer student lawyer chef cook artist "
    "scientist analyst consultant accountant architect musician photographer programmer researcher "
    "professor pilot driver farmer firefighter officer counselor counsellor therapist pharmacist dentist "
    "mechanic electrician plumber entrepreneur founder ceo cto cfo coo intern barista waiter waitress "
    "cashier journalist editor librarian veterinarian vet paramedic surgeon recruiter translator carpenter "
    "baker painter actor actress dancer singer coach trainer freelancer realtor banker economist biologist "
    "chemist physicist mathematician historian psychologist midwife principal sommelier clerk secretary "
    "receptionist janitor cleaner guard soldier sailor nanny tutor lecturer instructor supervisor director "
    "executive administrator technician physician nutritionist dietitian dietician optometrist radiologist "
    "surveyor planner producer assistant associate specialist strategist marketer salesperson hairdresser "
    "barber butcher florist tailor jeweler jeweller welder contractor landscaper gardener housekeeper "
    "caregiver paralegal auditor actuary broker trader investor advisor adviser attorney judge detective "
    "police policeman policewoman cop firefighter ranger pastor priest rabbi imam minister diplomat "
    "politician mayor senator youtuber streamer influencer blogger podcaster illustrator animator "
    "tester copywriter bartender dishwasher courier postman mailman miner fisherman stylist model comedian "
    "programmer coder sysadmin dev devops hacker scientist sociologist nurse medic orderly postdoc phd "
    "researcher lecturer tutor apprentice trainee sous cook chef dj carer porter steward stewardess "
    "hygienist physio physiotherapist radiographer sonographer technologist analyst admin"
).split())
# nouns that end like a job title but are not one ("I'm a big fan", "I'm a dog lover")
NOT_JOBS = frozenset((
    "fan lover beginner learner customer member smoker drinker eater sleeper user owner reader believer "
    "follower supporter viewer listener subscriber speaker sister brother mother father daughter partner "
    "grandmother grandfather foreigner stranger loner optimist pessimist perfectionist realist idealist "
    "minimalist tourist finalist introvert extrovert vegetarian vegan pescatarian person guy girl boy man "
    "woman lady kid child parent mom mum dad wife husband fiancee fiance friend neighbor neighbour "
    "roommate resident citizen native local bit lot little fool mess wreck morning night early late"
).split())
# conservative: suffixes that almost only make occupations (not "-er": fan, runner, New Yorker)
_JOB_SUFFIX = re.compile(
    r"(?:ologist|ographer|ician|iatrist|smith|wright|keeper|monger|"
    r"(?:sales|business|chair|fire|police|fisher|crafts|trades|repair|delivery|post|mail)(?:man|woman|person))$"
)
DIETS = (
    r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free|lactose[- ]intolerant|"
    r"flexitarian|carnivore|halal|kosher|low[- ]carb|plant[- ]based|raw vegan|coeliac|celiac|veggie"
)
JOB_WORDS = (
    r"engineer|developer|teacher|nurse|doctor|designer|manager|writer|chef|cook|lawyer|analyst|consultant|"
    r"accountant|architect|scientist|researcher|postdoc|intern|barista|waiter|waitress|cashier|editor|"
    r"sysadmin|administrator|technician|assistant|director|officer|specialist|lead|head|clerk|pharmacist|"
    r"professor|lecturer|tutor|student|driver|mechanic|electrician|plumber|therapist|paramedic|vet|"
    r"programmer|coordinator|executive|representative|rep|agent|associate|planner|producer|reporter|"
    + "|".join(sorted(JOBS - {"model", "guard", "dev", "admin", "phd", "sous"}, key=len, reverse=True))
)
REL = (
    "sister|brother|mother|mom|mum|father|dad|son|daughter|best friend|friend|boss|manager|cousin|aunt|"
    "uncle|grandma|grandmother|grandpa|grandfather|roommate|colleague|coworker|neighbor|neighbour"
)
SINGLE_REL = frozenset({"mother", "mom", "mum", "father", "dad", "boss", "manager", "best friend"})
PETS = (
    "dog|cat|puppy|kitten|parrot|bird|rabbit|bunny|hamster|goldfish|fish|cockatiel|turtle|tortoise|snake|horse|"
    "guinea pig|lizard|"
    "ferret|gecko|budgie|canary|chicken|goat|pony|rat|mouse|axolotl|labrador|lab|retriever|poodle|corgi|husky|"
    "beagle|spaniel|terrier|collie|dachshund|pug|bulldog|greyhound|whippet|shepherd|chihuahua|doodle|"
    "labradoodle|cockapoo|rottweiler|boxer|tabby|siamese|maine coon"
)
CAR_MAKES = (
    "toyota|honda|ford|tesla|subaru|bmw|audi|mercedes|volkswagen|vw|kia|hyundai|nissan|mazda|volvo|jeep|"
    "chevy|chevrolet|porsche|fiat|peugeot|renault|skoda|lexus|mini|jaguar|land rover|range rover|dodge|"
    "ram|gmc|cadillac|buick|lincoln|acura|infiniti|mitsubishi|suzuki|seat|citroen|opel|polestar|rivian|byd"
)
PHONES = (r"iphone|pixel|galaxy|samsung|android|oneplus|motorola|moto|nokia|xiaomi|huawei|blackberry|fairphone|"
          r"nothing phone")
LAPTOPS = r"macbook|thinkpad|chromebook|surface|dell xps|xps|framework laptop|zenbook|ideapad|laptop"
_DAY = r"(?:mon|tues|tue|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?"
# "my <k> is ...": things that are not a slot of the user ("my bad", "my guess is", "my point is")
NOT_SLOTS = (
    r"(?:bad|guess|point|plan|question|problem|issue|idea|thought|thinking|concern|worry|hope|"
    r"wish|excuse|answer|opinion|take|understanding|impression|feeling|head|heart|life|day|week|weekend|"
    r"(?:last|first|final) (?:day|shift|week)[a-z ]*|"
    r"morning|evening|night|back|stomach|throat|leg|arm|knee|mind|brain|god|gosh|pleasure|turn|fault|name|"
    r"full name|real name|age|birthday|hometown|job|profession|occupation|role|position|major|hobby|hobbies|"
    r"phone|cell|mobile|email|e-mail|number|home|new home|favou?rite [a-z ]+|fav [a-z ]+|fave [a-z ]+|"
    r"wife|husband|partner|girlfriend|boyfriend|gf|bf|fianc[ée]e?|spouse|" + REL + r"|diet|schedule|"
    r"[a-z]+ (?:class|classes|lesson|lessons|practice|session|sessions|meeting|training|shift|shifts|"
    r"appointment|day)|internet|wifi|house|apartment|flat|place|room|son|daughter|kids?|"
    r"dog|cat|pet|puppy|kitten|boss|manager|team|company|work|code|app|server|test|tests|build|sister|brother)\b"
)
# "<value> is my <slot>": slots that are people or no slot at all ("Tom is my brother", "that is my problem")
NOT_REVERSED = (r"(?:" + REL + r"|wife|husband|partner|girlfriend|boyfriend|gf|bf|fianc[ée]e?|spouse|friend|mate|"
                r"buddy|pal|life|thing|jam|fault|problem|point|excuse|bad|guess|home|hometown|job|hero|everything|"
                r"world|baby|boy|girl|kid|son|daughter|child|dog|cat|pet|man|woman|guy|type)")
_PARTNER = r"(?:wife|husband|partner|girlfriend|boyfriend|gf|bf|fianc[ée]e?|spouse|other half|hubby|missus)"
# "my sister's husband Tom is a chef": a relative's relative, no slot of the user's ("my son's school is" is one)
KIN_WORD = (rf"(?:{REL}|{_PARTNER}|son|daughter|kids?|child|children|parents?|in-laws?|niece|nephew|"
             r"[a-z]+-in-law|ex|best mate|mate)")


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


RULES: list[Rule] = [
    # where the user lives
    (_r(rf"{_WE}(?:'m| am|'re| are)? {_A}(?:live|living|reside|residing) in {_V}{_END}"), "lives_in", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have) {_A}(?:been )?{_A}(?:lived|living|resided|residing) in {_V}{_END}"), "lives_in", "profile", False, 0.9),  # noqa: E501
    (_r(rf"^{_WE} {_A}been {_A}(?:living|residing|based) in {_V}{_END}"), "lives_in", "profile", False, 0.85),  # noqa: E501
    # a home named by its town: "still unpacking boxes in our Aberdeen place", "my new Leith flat is tiny"
    (_r(r"\b(?:our|my) (?:new )?(?!(?:Airbnb|Christmas|Xmas|Easter|Summer|Holiday|Sunday|Saturday)\b)(?P<v>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)?) (?:place|flat|apartment|house|home|pad)\b"), "lives_in", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:moved|relocated)(?: back home| back| home| here| over| house| away| up| down| across| out| north| south| east| west)?(?: from (?:(?!\bto\b)[^,;!?])+?)? (?:to|into) {_V}{_END}"), "lives_in", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_WE}(?:'m| am|'re| are) {_A}based in {_V}{_END}"), "lives_in", "profile", False, 0.85),
    # "these days I'm up at 5", "I'm usually up by 6:30": being up at a clock time is waking then
    (_r(rf"{_WE}(?:'m| am|'re| are) {_A}(?:usually |normally |always |often |generally )?up (?P<v>(?:at|by|around|before) \d{{1,2}}(?::\d\d)?(?:\s*[ap]\.?m\.?)?)(?![\w:])"), "routine_wake", "fact", False, 0.8),  # noqa: E501
    # "we've got a little flat in Bologna", "I rent a studio in Leith": the home the user has is where they live
    (_r(rf"^{_WE}(?:'ve| have)? {_A}(?:got|have|own|rent|share|bought) (?:a|an|our|my) (?:[a-z]+ ){{0,2}}?(?:flat|house|place|apartment|home|studio|condo|cottage|bungalow|room) in {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    # residence by duration, rent or belonging: "we've been in Belfast about a year now", "I'm a Montreal resident"
    (_r(rf"{_WE}(?:'ve| have) {_A}been (?:living |based |settled )?in (?P<v>(?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z])[\w'-]*)?) (?=(?:for|about|nearly|almost|over|since|a year|a month|\d+ (?:years|months)|now)\b)"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_WE}(?:'re| are|'m| am|'ve been| have been)? {_A}renting (?:a |our |my |an )?(?:[a-z]+ )?(?:place|flat|house|apartment|room|studio|cottage) in {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_WE}(?:'re| are|'m| am) {_A}(?:an? )?(?:(?P<v>(?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z])[\w'-]*)?) (?:resident|local)s?|(?P<w>[a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:people|folks) now)\b"), "lives_in", "profile", False, 0.75),  # noqa: E501
    (_r(rf"(?:^|\bmy )(?:new )?home(?: base)? is (?:now )?(?:in )?{_V}{_END}"), "lives_in", "profile", False, 0.8),
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:settled|set up shop|set up home|made (?:my|our) home|put down roots) in {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"\b(?:i|we)(?:'m| am|'re| are) {_A}in (?P<v>(?!(?:a|an|the|my|our|love|trouble|pain|bed|class|school|town|line|charge|touch|shape|luck|time|debt|the middle|a hurry|a rush|a meeting|tears|hospital|heaven|hell|two minds|favou?r|agreement|control|doubt|danger|denial|shock|awe|care|recovery|labou?r|therapy|rehab|high school|college|uni|university|my \w+)\b)[a-z][a-z .'-]{{1,30}}?)(?: since [a-z0-9 ]+| now| these days| at the moment)?{_END}"), "lives_in", "profile", False, 0.7),  # noqa: E501
    (_r(rf"\b(?:new|our new|my new) (?:place|flat|apartment|house|home) (?:is )?in {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:signed|got) (?:the|a|our|my) (?:lease|tenancy|rental contract|keys) (?:in|on|for|to) (?:(?:a|the|our|my) (?:new )?(?:place|flat|apartment|house|home) in )?{_V}{_END}"), "lives_in", "profile", False, 0.75),  # noqa: E501
    (_r(rf"^(?:home|my home|home base)(?: for (?:me|us))? (?:=|is|'s) (?:now )?(?:a |an |the )?(?:[a-z ]+ )?(?:in|outside|near) {_V}{_END}"), "lives_in", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:upped sticks|packed up|pulled up roots)(?: and)?(?: (?:went|moved|headed|gone))? to {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_WE} {_A}(?:rent|own|bought a (?:place|house|flat)|rent a (?:place|flat|house)) in {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(r"^(?P<v>[a-z][a-z .'-]{1,30}?)(?:'s| is) (?:still |now |officially )?(?:my |our )?home\b"), "lives_in", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_IM} (?:originally )?from {_V}{_END}"), "hometown", "profile", False, 0.85),
    (_r(rf"{_I} grew up in {_V}{_END}"), "hometown", "profile", False, 0.85),
    (_r(rf"\bmy hometown is {_V}{_END}"), "hometown", "profile", False, 0.9),
    # work
    (_r(rf"{_I}(?:'m| am)? {_A}work(?:ing)? (?:at|for) (?:(?!\bas\b)[^,;!?.])+? as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.85),  # noqa: E501
    (_r(rf"{_I}(?:'m| am)? {_A}work(?:ing)? as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),
    (_r(rf"{_I}(?:'m| am)? {_A}work(?:ing)? as (?:a |an )?(?:(?!\bat\b)[^,;!?.])+? at {_V}{_END}"), "employer", "profile", False, 0.85),  # noqa: E501
    # "I'm a backend dev at Klarna": a job title then a capitalised place of work
    (_r(rf"{_IM} {_A}(?:a |an )(?:[a-z][\w-]* ){{0,3}}?[a-z][\w-]* (?:at|for) (?P<v>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*){{0,3}}){_END}"), "employer", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:started|start|began|begun) (?:working |to work |work )?as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:got|have|landed|found|took|accepted|started) (?:a |my )?(?:new )?(?:job|position|role) as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:got|been) promoted to (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.85),
    # done to the user by someone else: "they made me head chef", "work relocated me to Singapore"
    (_r(rf"\b(?:made|promoted|appointed|named) (?:me|us) (?:to )?(?:the |a |an |our |their )?(?P<bare>)(?P<v>(?:[a-z][\w-]* ){{0,3}}?[a-z][\w-]*){_END}"), "job", "profile", False, 0.8),  # noqa: E501
    (_r(rf"\b(?:relocated|transferred|posted) (?:me|us) (?:over |out |back )?to {_V}{_END}"), "lives_in", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'m| am|'ve been| have been|'ve become| have become| became| become) {_A}(?:a |an )(?P<bare>)(?P<v>(?:[a-z][\w-]* ){{0,3}}?[a-z][\w-]*){_END}"), "job", "profile", False, 0.85),  # noqa: E501
    (_r(rf"\bmy (?:new |current |actual )?(?:job|profession|occupation|role|position) is (?:a |an |as (?:a |an )?)?{_V}{_END}"), "job", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_I} {_A}(?:earn|make) (?:my|a) living as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.85),
    (_r(rf"{_IM} {_A}(?:a |an |the )?(?P<bare>)(?P<v>(?:[a-z][\w-]* ){{0,2}}?[a-z][\w-]*) (?=(?:at|for|with) )"), "job", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_IM} {_A}(?:a |an |the )?(?:[a-z][\w-]* ){{0,2}}?(?:{JOB_WORDS}) (?:at|for|with) {_V}{_END}"), "employer", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I} {_A}teach (?P<v>[a-z]+(?: [a-z]+)?) (?:at|in|to) "), "job", "profile", False, 0.75),
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:accepted|took|got|received|signed) (?:an? |the |my )?(?:job )?offer (?:at|from|with) {_V}{_END}"), "employer", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:switched|changed|moved) jobs? to {_V}{_END}"), "employer", "profile", False, 0.8),
    (_r(rf"{_I}(?:'m| am|'ve| have)? {_A}(?:work|working|switched to|moved to|on|changed to|gone to|going|back on|back to) (?:the )?(?P<v>nights|days|night shifts?|day shifts?|evenings|weekends|early shifts?|late shifts?|from home|remotely|part[- ]time|full[- ]time)\b"), "work_pattern", "fact", False, 0.75),  # noqa: E501
    (_r(rf"{_I}(?:'m| am)? {_A}work(?:ing)? (?:at|for) {_V}{_END}"), "employer", "profile", False, 0.85),
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:joined(?![^,;!?.]*\b(?:club|team|choir|gym|band|society|league|group|orchestra|class|course)\b)|started (?:working )?(?:at|for|with)|(?:got|started|landed|found|took|accepted) (?:a|my) (?:new )?(?:job|position|role) (?:at|with)|work with) {_V}{_END}"), "employer", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_IM} {_A}employed (?:at|by|with) {_V}{_END}"), "employer", "profile", False, 0.85),
    (_r(rf"{_IM} {_A}on the payroll (?:at|of|with) {_V}{_END}"), "employer", "profile", False, 0.8),
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:got |been )?(?:hired|taken on|poached|headhunted) (?:at|by) {_V}{_END}"), "employer", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have) {_A}been at (?P<v>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*){{0,3}}) for (?:ages|years|a while|a long time|\w+ (?:years|months))\b"), "employer", "profile", False, 0.75),  # noqa: E501
    # a change said by what is new at the place: "my new colleagues at Superdrug are so friendly", "first week
    # at Revolut done" (not "my old boss at Siemens", "my boss at work")
    (_r(r"(?:\b(?:my|our) new (?:colleagues|co-?workers|workmates|team|boss|manager|office|desk|badge|contract|job|role|position)|(?:^|\bmy )(?:very )?first (?:day|week|month|shift|payslip|pay ?check)) (?:at|with) (?P<v>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*){0,3})\b"), "employer", "profile", False, 0.75),  # noqa: E501
    # working for oneself is a job change (the employer it replaces ends): "I'm self-employed now", "went
    # freelance in January" (no subject), "set up on my own", "I run my own food truck", "started my own firm"
    (_r(rf"(?:{_I}(?:(?:'m| am) {_A}|(?:'ve| have)? {_A}(?:went|gone|turned|become|became|been) {_A})|^{_A}(?:went|gone|turned|became) )(?P<v>freelance|self-employed|self employed)\b"), "employer", "profile", False, 0.8),  # noqa: E501
    (_r(rf"(?:{_I}(?:'ve| have)? {_A}|^{_A})(?P<v>(?:set up|started|went out|gone out|branched out) on (?:my|our) own|(?:am |'m |'ve been |have been |started )?(?:working|work) for myself|(?:went|gone) solo)\b"), "self_employed", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:started|set up|launched|opened|founded|run|own|have|got|'ve got|have got)(?: up)? (?:my|our) (?:very )?own (?P<v>(?:[\w-]+ ){{0,3}}?(?:business|company|firm|shop|studio|agency|practice|consultancy|bakery|caf[eé]|salon|food truck|truck|restaurant|stall|brand|label|clinic|garage|bar|pub))\b"), "own_business", "profile", False, 0.8),  # noqa: E501
    # work said by what the user does for whom, now: "doing data entry for the NHS now", "I'm doing IT support
    # for a law firm these days" (the open path read it as a hobby); not "doing a favour for Tom now"
    (_r(rf"(?:^|{_I}(?:'m| am)? )(?:now |currently |mostly )?doing (?P<v>(?!(?:a|an|the|my|some|(?-i:it)|that|this|well|ok|okay|good|great|fine|nothing|something|anything|lots|loads|much|more|stuff|bits)\b)[a-z][a-z-]*(?: [a-z][a-z-]*)?) for (?:the |a |an |(?:a )?(?:couple of|few|some) )?(?:[\w&'-]+ ){{0,3}}(?:now|these days|nowadays|at the moment|full[- ]time|part[- ]time)\b"), "job", "profile", False, 0.75),  # noqa: E501
    # "I've got a membership at Anytime Fitness", "I'm a member at David Lloyd": a gym-like club, by its name
    (_r(r"\b(?:membership|(?:a |paying )?member) (?:at|with) (?:the )?(?P<v>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*){0,2})"), "gym", "profile", False, 0.75),  # noqa: E501
    # food
    (_r(rf"{_I}(?:'m| am|'ve been| have been|'ve become| have become| became| become| went| turned| go| eat| started eating|'ve gone| have gone|'ve turned| have turned|'m going| am going) {_A}(?:a |an |fully |strictly |mostly |100% )*(?P<v>{DIETS})\b"), "diet", "profile", False, 0.9),  # noqa: E501
    (_r(r"\bi(?:'ve| have)? (?:no longer eat|don't eat|do not eat|stopped eating|gave up|cut out|quit eating|"
        r"haven't eaten|have not eaten) (?P<v>meat|red meat|dairy|gluten|sugar|fish|pork|animal products|eggs)\b"),
     "diet_avoid", "profile", False, 0.85),
    (_r(rf"{_I}(?:'m| am) {_A}(?:on|doing) (?:an? |the )?{_V} diet\b"), "diet", "profile", False, 0.85),
    (_r(rf"{_I}(?:'m| am)? {_A}(?:on|doing|eating) (?:an? |the )?(?P<v>keto|paleo|vegan|low[- ]carb|whole30|intermittent fasting|carnivore|mediterranean)\b"), "diet", "profile", False, 0.85),  # noqa: E501
    (_r(r"\bi (?:can't|cannot|can not|shouldn't|mustn't) (?:eat|have|digest|tolerate) (?P<v>dairy|gluten|nuts|peanuts|shellfish|eggs|wheat|soy|lactose|meat|fish|pork|sugar)\b"), "diet_avoid", "profile", False, 0.85),  # noqa: E501
    (_r(rf"{_I} {_A}(?:follow|eat|keep|do|started|began|tried|switched to) (?:on )?(?:an? |the )?{_V} diet\b"), "diet", "profile", False, 0.85),  # noqa: E501
    (_r(rf"{_I} {_A}(?:started|began|switched to|went|am going|'m going) (?P<v>keto|paleo|vegan|vegetarian|pescatarian|low[- ]carb|plant[- ]based)\b"), "diet", "profile", False, 0.85),  # noqa: E501
    # who the user is
    (_r(rf"\bmy (?:full |real )?name(?: is|'s) (?P<name>){_V}{_END}"), "name", "profile", False, 0.95),
    (_r(r"^i(?:'m| am) (?P<name>)(?P<iam>)(?P<v>(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?))(?=\s*(?:[,.!]|\bhere\b|$))"), "name", "profile", False, 0.6),  # noqa: E501
    (_r(rf"\b(?:please |you can |just )?call me (?P<name>){_V}{_END}"), "preferred_name", "profile", False, 0.9),
    (_r(rf"{_I} go by (?P<name>){_V}{_END}"), "preferred_name", "profile", False, 0.9),
    (_r(r"\bi (?:was|were) born in (?P<v>(?:19|20)\d\d)\b"), "birth_year", "profile", False, 0.85),
    (_r(r"\bi(?:'m| am|'ve just turned| have just turned| just turned| turned) (?P<v>\d{1,3})(?: years old| yrs old| yo)?\b(?! ?(?:%|percent|kids|children|dogs|cats|times|days|hours|minutes|mins|weeks|months|miles|km|pounds|lbs|kg|dollars|euros|feet|ft|inches|cm|min|am|pm|o'clock|-))"), "age", "profile", False, 0.7),  # noqa: E501
    (_r(rf"\bmy birthday is (?:on )?{_V}{_END}"), "birthday", "profile", False, 0.9),
    (_r(rf"\bmy (?:new |current )?(?:(?:phone|cell|mobile|cellphone|cell phone|telephone)(?: number| no\.?)?|number)(?: is| =|:) (?:now )?{PHONE}"), "phone", "profile", False, 0.9),  # noqa: E501
    (_r(rf"{_I} (?:just )?changed my (?:phone |cell |mobile )?number to {PHONE}"), "phone", "profile", False, 0.9),
    (_r(rf"\bmy (?:new |current )?e-?mail(?: address)?(?: is| =|:) (?:now )?{EMAIL}"), "email", "profile", False, 0.9),
    (_r(rf"{_I} (?:just )?changed my e-?mail(?: address)? to {EMAIL}"), "email", "profile", False, 0.9),
    # partner and family
    (_r(rf"\bmy (?:new |current )?{_PARTNER} is (?:called|named) (?P<name>){_V}{_END}"), "partner", "relationship", False, 0.9),  # noqa: E501
    (_r(rf"^(?:me and |i and )?my {_PARTNER},? (?P<name>)(?P<v>[A-Za-z][a-z]+),? (?:and (?:i|me) )?(?:have|are|and)\b"), "partner", "relationship", False, 0.8),  # noqa: E501
    (_r(rf"\b(?:my|our) (?:(?:new|little|old|sweet|rescue) )*(?P<k>{PETS})(?:'s name is| is called| is named|'s called|'s named|, called|, named) (?P<name>)(?P<v>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?){_END}"), "pet_named", "relationship", True, 0.85),  # noqa: E501
    (_r(rf"\b(?:i|we)(?:'ve| have)? (?:got |have )?(?:an? |two |\d+ )?(?:(?:new|little|baby|rescue|twin) )*(?P<k>{PETS}) (?:called|named) (?P<name>)(?P<v>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?){_END}"), "pet_named", "relationship", True, 0.85),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:got|adopted|rescued) (?:an? |another |a second )?(?:(?:new|little|baby) )*(?P<k>{PETS})(?: too| as well)?,? (?:called|named) (?P<name>)(?P<v>[A-Za-z][\w'-]*){_END}"), "pet_named", "relationship", True, 0.85),  # noqa: E501
    (_r(rf"\bi have an? (?:(?:twin|younger|older|little|big|baby|step|half) )*(?P<k>{REL}) (?:named|called) (?P<name>)(?P<v>[A-Za-z][\w'-]*){_END}"), "relationship", "relationship", True, 0.85),  # noqa: E501
    (_r(r"^(?P<name>)(?P<v>[A-Za-z][a-z]+)(?:'s| is) (?:now |officially )?my (?:new )?(?:fianc[ée]e?|wife|husband|partner|girlfriend|boyfriend|spouse)\b"), "partner", "relationship", False, 0.85),  # noqa: E501
    (_r(rf"^(?:and |also |plus )?an? (?:(?:twin|younger|older|little|big|baby|step|half) )*(?P<k>{REL}) (?:named|called) (?P<name>)(?P<v>[A-Za-z][\w'-]*){_END}"), "relationship", "relationship", True, 0.8),  # noqa: E501
    (_r(r"\b(?:we|i) got married (?:in|on|back in) (?P<v>(?:\d{4}|[a-z]+ \d{4}|[a-z]+))\b"), "married_in", "fact", False, 0.85),  # noqa: E501
    (_r(rf"{_I} {_A}(?:use|run|switched to|moved to) (?P<v>linux|windows|macos|mac ?os|ubuntu|fedora|arch|debian|chromeos|ios|android)\b"), "os", "profile", False, 0.8),  # noqa: E501
    # a degree at a named place: "I'm doing my master's at TU Delft", "I start my MBA at INSEAD"
    (_r(rf"{_I}(?:'m| am|'ve| have)? {_A}(?:doing|do|started|start|starting|began|begin|studying for|halfway through) (?:my |a |an |the )?(?:(?:first|second|third|final|last) year of (?:my |a |an )?)?(?:master'?s|masters|mba|phd|doctorate|degree|bachelor'?s|undergrad|msc|ma|ba|bsc|llm|pgce|postgrad|a-levels)\b[^,;!?.]*? at (?P<v>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*){{0,3}}){_END}"), "school", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I} {_A}(?:go|goes|went|started|start|am going|'m going) (?:to|at) (?P<v>(?:[^,;!?.]|\.(?=\S)|\. (?=[a-z]))*?\b(?:school|nursery|college|university|uni|academy|kindergarten|preschool|primary|high))\b"), "school", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'m| am|'ve| have)? {_A}(?:drink|drinking|have) (?P<v>(?:a |an |the )?(?:glass|pint|bottle|beer|wine|cocktail|whisky|whiskey|gin|vodka|rum|alcohol|drink)[^,;!?.]*?){_END}"), "drinking", "fact", False, 0.75),  # noqa: E501
    (_r(rf"(?:{_IM}|{_I}(?:'ve| have) been|^been|^(?:now |currently )?) {_A}(?P<v>sober|teetotal|tee-total|alcohol[- ]free|not drinking(?: at all)?)\b"), "drinking", "fact", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:transferred|signed) (?:clubs? |teams? )?(?:to|for|with) (?:the )?{_V}{_END}"), "team", "fact", False, 0.75),  # noqa: E501
    (_r(rf"{_I} {_A}do (?P<v>(?:it |tech |customer |technical )?(?:support|consulting|design|marketing|admin|accounts|accounting|sales|research|freelance work|development|engineering|bookkeeping|recruiting|hr)) (?:for|at) "), "job", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_I} {_A}do (?:it |tech |customer |technical )?(?:support|consulting|design|marketing|admin|accounts|accounting|sales|research|freelance work|development|engineering|bookkeeping|recruiting|hr) (?:for|at) {_V}{_END}"), "employer", "profile", False, 0.75),  # noqa: E501
    (_r(r"^(?:now |currently )?(?:an? )?(?P<bare>)(?P<v>(?:[a-z][\w-]* ){0,2}?[a-z][\w-]*) (?=(?:at|for|with) [A-Z])"), "job", "profile", False, 0.7),  # noqa: E501
    (_r(r"^(?P<bare>)(?P<v>[a-z]+(?: [a-z]+)?) here\b"), "job", "profile", False, 0.7),
    (_r(rf"\bmy (?P<k>{PETS}) (?P<name>)(?P<v>(?!is\b|has\b|was\b|and\b|just\b|who\b|that\b)[a-z][a-z'-]+)(?= (?:is|has|was|needs|keeps|loves|hates|just|got|does|did|likes|knocked|ate|chewed|sleeps|barks|pulls)\b)"), "pet_named", "relationship", True, 0.75),  # noqa: E501
    (_r(r"\bmy (?P<k>hairdresser|barber|dentist|gp|doctor|vet|therapist|physio|accountant|lawyer|manager|boss|landlord|landlady|trainer|tutor|coach|mechanic|optician)(?:'s name is| is called| is named|,| is)? (?P<name>)(?P<v>(?:dr\.? )?(?!is\b|was\b|keeps\b|says\b|has\b|and\b|took\b|told\b|said\b|put\b|gave\b|made\b|wants\b|thinks\b|[a-z]+ed\b)[a-z][a-z'-]+)\b(?! (?:is|was) (?:a|an|the|so|very|really)\b)"), "service", "relationship", False, 0.75),  # noqa: E501
    (_r(r"\bnew (?P<k>hairdresser|barber|dentist|gp|doctor|vet|therapist|manager|boss|landlord|trainer|tutor|coach)(?: is)?(?: a (?:guy|woman|man|lady|bloke|girl))?,? (?:called |named )?(?P<name>)(?P<v>(?:dr\.? )?[a-z][a-z'-]+)\b"), "service", "relationship", False, 0.75),  # noqa: E501
    (_r(rf"{_WE} {_A}pay for (?P<v>[^,;!?.]+?){_END}"), "subscription", "fact", True, 0.7),
    (_r(rf"{_I}(?:'m| am)? {_A}(?:take|taking|on) (?P<v>[a-z]+(?:ine|ol|am|pam|pril|statin|mab|zole|done|lin|xetine|pine|tide|pam|zepam))\b"), "medication", "fact", True, 0.75),  # noqa: E501
    (_r(rf"\bmy {_PARTNER},? (?P<name>)(?P<v>[A-Za-z][a-z]+),? and (?:i|me)\b"), "partner", "relationship", False, 0.8),  # noqa: E501
    (_r(r"\b(?:seeing|dating|with) (?:someone|a (?:guy|girl|woman|man|lad|lass)) (?:called|named) (?P<name>)(?P<v>[A-Za-z][a-z]+)\b"), "partner", "relationship", False, 0.8),  # noqa: E501
    (_r(r"\bi (?:usually |always |now )?(?P<v>cycle|bike|walk|drive|run|get the (?:bus|train|tram|tube|ferry)|take the (?:bus|train|tram|tube|ferry)) (?:to work|in to work|into work|to the office|in)\b"), "commute", "fact", False, 0.75),  # noqa: E501
    (_r(r"\b(?:got|adopted|rescued|have) (?:a |an )(?:[\w-]+ ){0,2}?(?P<k>" + PETS + r")\b[^.!?]*?\bnamed (?:her|him|it|them) (?P<name>)(?P<v>[a-z][a-z'-]+)\b"), "pet_named", "relationship", True, 0.8),  # noqa: E501
    (_r(r"\b(?:my|our) (?P<k>" + PETS + r") is an? (?:[\w-]+ )?(?:called|named) (?P<name>)(?P<v>[a-z][a-z'-]+)\b"), "pet_named", "relationship", True, 0.8),  # noqa: E501
    (_r(rf"\bswitched banks? to {_V}{_END}"), "bank", "fact", False, 0.8),
    (_r(r"\b(?:got|bought|have) (?:a |an |my )?(?:new )?laptop,? (?:a |an |the )?(?P<v>[a-z][\w -]{1,30}?)(?=,|\.|$| and| ngl| tbh)"), "laptop", "profile", False, 0.75),  # noqa: E501
    (_r(rf"\b(?:new|a) job (?:at|with) {_V}{_END}"), "employer", "profile", False, 0.75),
    (_r(r"\bgiving (?P<v>keto|paleo|vegan|veganism|low[- ]carb|whole30|intermittent fasting) a (?:go|try|shot)\b"), "diet", "profile", False, 0.75),  # noqa: E501
    (_r(r"\b(?:doing|studying) (?P<v>french|german|dutch|greek|spanish|italian|arabic|japanese|chinese|mandarin|korean|polish|portuguese|russian|turkish|hindi|welsh|irish|swedish|norwegian|danish|finnish)\b"), "learning", "fact", True, 0.7),  # noqa: E501
    (_r(r"^(?:i'm |im |i am |now )?on (?P<v>earlies|lates|nights|days|night shifts?|day shifts?|early shifts?|late shifts?)\b"), "work_pattern", "fact", False, 0.75),  # noqa: E501
    # memberships, subscriptions
    (_r(rf"{_IM} {_A}(?:a )?member of (?:the |a )?{_V}{_END}"), "member_of", "fact", True, 0.8),
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:joined|signed up for|signed up to|started going to) (?:the |a |an )?(?P<v>[^,;!?.]*?\b(?:club|team|choir|gym|band|society|league|group|orchestra|class|course|union|crew)){_END}"), "member_of", "fact", True, 0.8),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:have|got|pay for|subscribe to|signed up for) (?:an? |the )?(?P<v>[^,;!?.]*?) (?:account|subscription|membership|plan)\b"), "subscription", "fact", True, 0.75),  # noqa: E501
    (_r(rf"{_I} {_A}play (?:the )?(?P<v>piano|guitar|violin|cello|drums|bass|flute|saxophone|sax|trumpet|ukulele|harp|clarinet|viola|keyboard|organ|trombone|banjo|mandolin)\b"), "plays", "preference", True, 0.8),  # noqa: E501
    (_r(rf"{_I} {_A}play (?:for|with|on) (?:the )?{_V}{_END}"), "team", "fact", False, 0.75),
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:started )?learning (?:the |to play the |to play )?(?P<v>piano|guitar|violin|cello|drums|bass|flute|saxophone|trumpet|ukulele|harp|clarinet|[a-z]+ish|[a-z]+ese|[a-z]+ian|french|german|dutch|greek|spanish|italian|arabic|japanese|chinese|mandarin|korean|polish|portuguese|russian|turkish|hindi)\b"), "learning", "fact", True, 0.75),  # noqa: E501
    (_r(rf"\bmy (?:new |current )?{_PARTNER}(?:'s name)? is (?P<name>){_V}{_END}"), "partner", "relationship", False, 0.9),  # noqa: E501
    (_r(rf"{_IM} {_A}(?:married to|engaged to|dating|seeing|in a relationship with) (?P<name>){_V}{_END}"), "partner", "relationship", False, 0.85),  # noqa: E501
    # "I'm with Sam now" is a partner; "I'm with Acme Health now" (two capitalised words) an employer
    (_r(rf"{_IM} {_A}with (?P<name>)(?P<v>[A-Za-z][a-z]+)(?: now| these days)?{_END}"), "partner", "relationship", False, 0.85),  # noqa: E501
    (_r(rf"{_IM} {_A}with (?P<v>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*)+)(?: now| these days)?{_END}"), "employer", "profile", False, 0.75),  # noqa: E501
    (_r(rf"{_I} {_A}(?:got )?(?:married|engaged)(?: to)? (?P<name>){_V}{_END}"), "partner", "relationship", False, 0.85),  # noqa: E501
    (_r(r"\bi(?:'m| am| got| just got|'ve just got|'ve got| have got) (?:now |officially |recently |finally )?(?P<v>married|single|divorced|engaged|widowed|separated)\b"), "marital_status", "profile", False, 0.85),  # noqa: E501
    (_r(rf"\bi have (?P<v>(?:no|one|two|three|four|five|six|\d+) (?:kids|children|sons|daughters|son|daughter|kid|child)){_END}"), "children", "profile", False, 0.85),  # noqa: E501
    (_r(rf"\bmy (?P<k>{REL})(?:'s name)? is (?P<name>){_V}{_END}"), "relationship", "relationship", True, 0.85),
    (_r(rf"{_I} have an? (?P<k>{REL}) (?:named|called) {_V}{_END}"), "relationship", "relationship", True, 0.85),
    (_r(rf"{_WE}(?:'ve| have)? {_A}(?:have|got|adopted|rescued|bought|brought home|took in) (?:an?|two|three|four|\d+) (?:new |little |baby )?(?P<v>(?:[a-z]+ )?(?:{PETS})(?:s|es)?(?: (?:named|called) [^,.;!?]+?)?){_END}"), "pet", "relationship", True, 0.85),  # noqa: E501
    # things
    (_r(rf"\bmy (?:new |current )?car is (?:now )?(?:an? |the )?{_V}{_END}"), "car", "profile", False, 0.8),
    (_r(rf"{_I} {_A}(?:drive|own) an? {_V}{_END}(?<!\bhouse)(?<!\bapartment)(?<!\bflat)(?<!\bhome)(?<!\bbusiness)"), "car", "profile", False, 0.6),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:bought|got|purchased|leased) (?:myself )?an? (?:new |used )?(?P<v>(?:{CAR_MAKES})\b[^,;!?.]*?){_END}"), "car", "profile", False, 0.8),  # noqa: E501
    (_r(rf"{_I}(?:'m| am)? {_A}(?:study|studying|majoring in|major in) {_V}{_END}"), "studies", "profile", False, 0.8),
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:switched|changed) my major to {_V}{_END}"), "studies", "profile", False, 0.85),
    (_r(rf"\bmy major is (?:now )?{_V}{_END}"), "studies", "profile", False, 0.85),
    # preferences
    (_r(rf"{_I}(?: would|'d)? {_A}(?:much |now |really )*prefer {_V}{_END}"), "prefers", "preference", False, 0.85),
    (_r(r"\bmy (?:favou?rite|fav|fave) (?P<k>[a-z][a-z ]{0,30}?) (?:now |at the moment |these days )?(?:is|are) (?:now )?(?P<v>[^,.;!?]+?)(?=\s*(?:[,.;!?]|\bbut\b|\bbecause\b|$))"), "favorite", "preference", False, 0.85),  # noqa: E501
    (_r(r"^(?:(?:my )?new |current )?(?:favou?rite|fav|fave) (?P<k>[a-z][a-z ]{0,30}?)(?: now| at the moment)? ?(?:is|are|:|=) (?:now )?(?P<v>[^,.;!?]+?)(?=\s*(?:[,.;!?]|\bbut\b|\bbecause\b|$))"), "favorite", "preference", False, 0.8),  # noqa: E501
    (_r(rf"{_IM} {_A}allergic to {_V}{_END}"), "allergy", "preference", True, 0.9),
    (_r(rf"{_I} {_A}(?:like|love|enjoy|adore)(?! to be\b)(?! it\b) {_V}{_END}"), "likes", "preference", True, 0.7),
    (_r(rf"{_I} {_A}(?:hate|dislike|detest|can't stand|cannot stand|don't like|do not like|don't enjoy) {_V}{_END}"), "dislikes", "preference", True, 0.7),  # noqa: E501
    (_r(rf"\bmy hobb(?:y is|ies are|ies include) {_V}{_END}"), "hobby", "preference", True, 0.85),
    # h-ledger9: an activity the user took up, said of its start ("I've also got into pottery lately", "took up
    # bouldering"): one lower-case word, not "got into trouble / bed / Oxford", "took up the offer"
    (_r(r"(?:^|\b(?:i|we)(?:'ve| have)? )(?:(?:also|just|recently|really|finally|properly) )*(?:got|gotten|getting|"
        r"been getting|took|taken|taking) (?:into|up) (?!(?:trouble|debt|bed|it|that|this|them|him|her|a|an|the|"
        r"my|our|his|their|work|arguments?|fights?|space|room|time|smoking|drinking|vaping)\b)"
        r"(?P<v>(?-i:[a-z]+))(?=\s*(?:[,;!?.]|$|\b(?:lately|recently|these days|this year|now|too|as well|again)\b))"),
     "hobby", "preference", True, 0.75),
    # h-ledger9: "back to being veggie", "gone fully vegan since January": the diet said without "I"
    (_r(rf"(?:^|\bi(?:'m| am)? )(?:back to being|(?:{_A})(?:gone|went|turned|become|been)) {_A}(?:a |an )?(?P<v>{DIETS})\b"),  # noqa: E501
     "diet", "profile", False, 0.85),
    (_r(rf"(?:{_I}(?: {_A}speak|(?:'m| am) {_A}fluent in)|^{_A}(?:(?:pretty|almost|nearly|basically) )?fluent in) {_V}{_END}"), "speaks", "fact", True, 0.8),  # noqa: E501
    (_r(rf"{_IM} {_A}learning {_V}{_END}"), "learning", "fact", True, 0.75),
    # devices
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:have|got|bought|use|switched to|upgraded to|changed to|moved to) (?:myself )?(?:an? |the |my )?(?:new )?(?P<v>(?:{PHONES})\b[^,;!?.]*?)(?: phone)?{_END}"), "phone_model", "profile", False, 0.8),  # noqa: E501
    (_r(rf"\bmy (?:new |current )?(?:phone|cell|mobile|cellphone) is (?:now )?(?:an? |the )?(?P<v>(?:{PHONES})\b[^,;!?.]*?){_END}"), "phone_model", "profile", False, 0.85),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:have|got|bought|use|switched to|upgraded to) (?:myself )?(?:an? |the |my )?(?:new )?(?P<v>(?:{LAPTOPS})\b[^,;!?.]*?){_END}"), "laptop", "profile", False, 0.8),  # noqa: E501
    # routines: "I go to yoga on Mondays", "I have piano every Thursday at 6"
    (_r(rf"{_WE} {_A}(?:usually |always |normally )?(?:go to|go|do|have|take|attend|play|teach|practice|practise|run|swim|work out|train|volunteer)(?: at)? (?P<k>(?!a\b|an\b|to\b|it\b|out\b)[a-z][a-z -]{{1,30}}?) (?P<v>(?:(?:on|every|each|most) (?:{_DAY}s?|weekday|weekend|morning|evening|night|day|week)|\d+x a week|\d+ times a (?:week|month)|(?:once|twice|three times) a (?:week|month|day)|daily)[^,;!?.]*?){_END}"), "routine", "fact", False, 0.8),  # noqa: E501
    (_r(rf"\bmy (?P<k>[a-z][a-z -]{{1,30}}?) (?:class|classes|lesson|lessons|practice|session|sessions|meeting|training|shift|shifts|appointment|day) (?:is|are) (?:now |usually |always )?(?P<v>(?:on|every|at|each) [^,;!?.]+?){_END}"), "routine", "fact", False, 0.85),  # noqa: E501
    (_r(rf"{_I}(?:'ve| have)? {_A}(?:moved|switched|changed|rescheduled|shifted) (?:my )?(?P<k>[a-z][a-z -]{{1,30}}?)(?: class| classes| lesson| lessons| practice| session| sessions)? to (?P<v>(?:{_DAY}s?|mornings?|evenings?|weekends?)\b[^,;!?.]*?){_END}"), "routine", "fact", False, 0.85),  # noqa: E501
    (_r(rf"{_WE} {_A}(?:usually |always |normally )?(?P<k>work out|exercise|run|swim|cycle|meditate|train|climb|row) (?P<v>(?:(?:every|each|on|most) [^,;!?.]+?|{_DAY}s\b[^,;!?.]*?)){_END}"), "routine", "fact", False, 0.75),  # noqa: E501
    # open slots: "my favourite colour is teal" is above; "my <thing> is <value>"
    (_r(rf"\b(?:my|our) (?:new |current )?(?!{NOT_SLOTS}(?:'s)? (?:is|are)\b)(?!{KIN_WORD}'s {KIN_WORD}\b)(?P<k>[a-z][a-z' -]{{1,30}}?)(?: is| are) (?:now |currently |still )?(?!a bit|so |very |really |too |not |being |getting |going |that |if |whether |when |how |what )(?P<v>[^,;!?.]{{1,60}}?){_END}"), "slot", "fact", False, 0.7),  # noqa: E501
    # the same slot said the other way round: "Wet Leg is my favourite band now", "oat cortado is my order
    # these days", "diavola has taken the crown as my favourite pizza", "new goal: a half marathon"
    (_r(rf"^(?P<v>(?!(?:i|we|it|that|this|he|she|they|there|what|which|who|you|mine|one)\b)[^,;!?.]{{1,40}}?) (?:is|are|'s) (?:now |officially |definitely |still )?my (?:new |current )?(?!{NOT_REVERSED}\b)(?P<k>[a-z][a-z' -]{{1,30}}?)(?: now| these days| at the moment| for now| nowadays)?{_END}"), "slot", "fact", False, 0.7),  # noqa: E501
    (_r(rf"^(?P<v>(?!(?:i|we|it|that|this|he|she|they|you)\b)[^,;!?.]{{1,40}}?) (?:has |have |'s )?(?:replaced [^,;!?.]{{1,40}}?|taken (?:the |over )?[a-z ]{{0,20}}?|become|became|officially become|now) as my (?:new )?(?P<k>[a-z][a-z' -]{{1,30}}?){_END}"), "slot", "fact", False, 0.7),  # noqa: E501
    (_r(rf"^(?:my )?new (?!{NOT_REVERSED}\b)(?P<k>[a-z][a-z' -]{{1,30}}?) ?(?::|=) (?P<v>[^,;!?.]{{1,60}}?){_END}"), "slot", "fact", False, 0.7),  # noqa: E501
]
# a place somebody is at for a while ("this week I'm in Lisbon"): read only with a temporary period
TEMP_PLACE = _r(rf"^(?:(?:i'm|i am|we're|we are) )?(?:in|at) (?P<x>(?!the moment\b|home\b|work\b|bed\b)[a-z][^,;!?.]*?)(?= for| on|{_END})|{_WE}(?:'m| am|'re| are|'ll be| will be)? {_A}(?:staying |visiting |travel(?:l)?ing |working |away |over |down |up |out |back )?(?:in|at|with|to) (?P<v>(?!the moment\b|home\b|work\b)[^,;!?.]+?){_END}|{_WE}(?:'m| am|'re| are) {_A}visiting (?P<w>[^,;!?.]+?){_END}")  # noqa: E501

# Negations, rewritten to the positive clause they undo: "I'm not vegan anymore" -> "I'm vegan".
NEGATIONS: list[tuple[re.Pattern[str], str]] = [
    (_r(r"\bi(?:'m| am) not (?P<rest>.+?) any ?more\b"), "I'm "),
    (_r(r"\bi(?:'m| am) no longer (?P<rest>.+)$"), "I'm "),
    (_r(r"\bi(?:'ve| have)? stopped being (?P<rest>.+)$"), "I'm "),
    (_r(r"\bi(?:'ve| have)? (?:stopped|quit) (?P<rest>\w+ing\b.*)$"), "I'm "),
    (_r(r"\bi (?:no longer|don't|do not|dont|won't) (?P<rest>.+?) any ?more\b"), "I "),
    (_r(r"\bi no longer (?P<rest>.+)$"), "I "),
]
# Statements that end facts without naming a new value: (pattern, predicates, value group or None).
CLOSERS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (_r(r"\bi(?:'ve| have)? (?:just )?(?:quit|left|lost) my (?:job|position|role)\b"), ("job", "employer")),
    # not with an object of its own: "I retired Dancing Queen from the setlist", "I fired my accountant",
    # "I let go of it" end no job
    (_r(r"\bi(?:'ve| have| got| was| just got|'ve been| have been)? (?:just )?(?:retired|laid off|fired|let go|made redundant)\b"  # noqa: E501
        r"(?!\s+(?:(?:the|an?|my|our|his|her|their|its|those|these|that|it|them|him|of)\b|(?-i:[A-Z])))"), ("job", "employer")),  # noqa: E501
    (_r(r"\bi(?:'m| am) (?:now )?(?:retired|unemployed|between jobs|out of work|jobless|looking for (?:a )?(?:new )?(?:job|work))\b"), ("job", "employer")),  # noqa: E501
    (_r(r"\b(?:i|we)(?:'ve| have)? (?:just |finally |recently )?(?:broke up|broken up|divorced|got divorced|split up|split from|separated from|got separated|dumped)\b"), ("partner",)),  # noqa: E501
    (_r(r"\bi (?:eat|started eating|'m eating|am eating|eat) meat(?: again)?\b"), ("diet",)),
    (_r(r"\b(?:i|we)(?:'ve| have)? (?:just |finally )?(?:sold|got rid of|gave away|totaled|totalled|wrote off|"
        r"returned|don't have|do not have|no longer have) (?:my|our|the|a) (?:old )?car\b"), ("car",)),
    (_r(r"\b(?:i|we)(?:'ve| have)? (?:just |finally )?(?:sold|got rid of|gave away|lost|broke|smashed|returned) "
        r"(?:my|our|the) (?:old )?(?:phone|iphone|pixel)\b"), ("phone_model",)),
]
# Closers that name the value they end: "I left Acme", "I moved out of Bonn", "my hamster died".
VALUE_CLOSERS: list[tuple[re.Pattern[str], tuple[str, ...], bool]] = [
    (_r(rf"{_I}(?:'ve| have)? (?:just )?left (?!my (?:job|position|role)\b)(?![^,;!?.]* for (?-i:[A-Z])){_V}{_END}"), ("employer", "lives_in"), False),  # noqa: E501
    (_r(rf"{_WE}(?:'ve| have)? (?:just )?moved (?:out of|away from) {_V}{_END}"), ("lives_in",), False),
    (_r(rf"\bmy (?:(?:old|little|sweet|beloved) )?(?P<v>{PETS})(?: [A-Z]\w*)? (?:has )?(?:died|passed away|passed|ran away|is gone)\b"), ("pet",), True),  # noqa: E501
]

HEDGE = _r(
    r"\b(?:maybe|perhaps|probably|possibly|i think|i guess|i believe|might|not sure|kind of|sort of|"
    r"thinking about|thinking of|considering|i suppose|apparently)\b"
)
# someone else's idea, not the user's fact (h-ledger9): "they offered me a job at Superdrug", "my friend keeps
# saying I should move to Hastings", "mum wants me to move home"; advice is no fact: "I should move to Hastings"
NOT_MINE = (r"offer(?:ed|s|ing)? (?:me|us)|(?:told|tells|telling|asked|asks|asking|wants|wanted|urged|urging|begging|"
            r"nagging|pushing|encouraging|encouraged) (?:me|us) to|(?:i|we) (?:should|ought to)(?! have)|"
            r"(?:i|we) could(?! (?:always|never|already|still)\b)(?= \w+ (?:to|in|at|for|a|an|the)\b)")
NOT_MINE_RE = re.compile(rf"\b(?:{NOT_MINE})\b", re.IGNORECASE)
SKIP = _r(
    # "used to" is the past, not "still getting used to it", "I'm used to the cold" (getting / being used to)
    r"\b(?:(?<!getting )(?<!get )(?<!got )(?<!'m )(?<!am )(?<!'re )(?<!are )used to|"
    r"would like|'d like|'d love|would love|would be|'d be|if i|if we|when i was|when we were|"
    r"as a kid|as a child|growing up|wish i|wish we|wished i|hope to|hoping to|want to|wanna|going to|gonna|"
    r"plan to|planning to|about to|someday|one day|in the future|what if|how about|"
    r"next (?:week|month|year|summer|winter|spring|"
    r"fall|autumn|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|time)|should i|could i|"
    r"can i|do you|are you|don't you|would you|will you|" + NOT_MINE + r")\b"
)
FUTURE = re.compile(r"\b(?:will|shall)\b|'ll\b")  # case-sensitive: "Will" may be a name
QUESTION_START = _r(r"^(?:do|does|did|should|shall|can|could|would|will|is|are|am|was|were|what|where|who|why|how|which|whom|whose)\b")  # noqa: E501
LEAD = _r(
    r"^(?:oh|well|so|also|and|but|btw|by the way|actually|anyway|anyways|yeah|yes|no|ok|okay|hey|hi|hello|"
    r"update|fyi|just so you know|just fyi|for the record|sorry|oops|correction|to be clear|honestly|"
    r"guess what|good news|big news|news|quick update|as of today|as of now|these days|nowadays|now|ps|p\.s\.|"
    r"i'?d say|i would say|to be honest|tbh|"
    # a leading reason or time phrase before the subject: "since the new job I get up at 7:30"
    r"(?:since|after|with|because of) (?:the|my|our) (?:[a-z]+ ){0,2}?[a-z]+(?=,? (?:i|we)\b))"
    r"\b[,:!.]?\s*"
)
ELLIPTICAL = _r(
    r"^(?:just |finally |recently |also |now |currently )*(?:moved|relocated|living|live|started|starting|joined|"
    r"got|became|quit|left|switched|working|work|retired|studying|adopted|bought|married|broke up|speak|"
    r"prefer|love|like|have|drive|accepted|took|landed|joined|rejoined|sold|replaced|upped sticks|signed up|"
    r"teach|play|use|earn|rent|own|go|transferred|signed|doing|taking|paying|grew|learning|been living|been working)\b"
)
NOT_SPEAKERS = frozenset((
    "update note ps fyi btw edit reminder correction news question answer q a re important warning info tip "
    "summary context fact facts todo task subject title status result results example hint also ok okay "
    "well so yes no hi hello hey dear thanks sorry anyway actually spoiler alert source location address "
    "phone email name age job diet translation original quote step day week morning tonight today "
    "yesterday tomorrow now then later me user i"
).split())
ASSISTANT_LABELS = frozenset(
    "assistant ai bot chatbot system gpt chatgpt claude gemini copilot model agent tool developer".split()
)


# "I'm <Capitalised>" is a name unless it is a nationality, faith, sign or state of mind
NOT_NAMES = frozenset((
    "jewish muslim hindu buddhist christian catholic mormon sikh atheist agnostic thai swiss dutch french "
    "greek irish scottish welsh english british czech iraqi israeli pakistani nepali bengali saudi somali "
    "fine good okay ok back home here ready done sorry sure new gemini leo virgo libra scorpio aries taurus "
    "cancer pisces aquarius capricorn sagittarius vegan vegetarian single married divorced engaged"
).split())
_NATIONALITY = re.compile(r"(?:ese|ish|ian|can|ic|ist|ean)$")
# a place someone lives is named; "a new apartment" or "the office" is not where they live
DWELLINGS = frozenset((
    "apartment flat house place home room building condo studio dorm floor office desk team department "
    "position role server model version neighborhood neighbourhood area street unit suite bedroom"
).split())
# what "moved (over) to" also takes that is no place: software, plans, devices ("moved over to Brave browser")
NOT_PLACES = frozenset((
    "browser app apps platform plan tariff account bank provider network carrier service subscription os "
    "linux windows macos ubuntu android ios iphone pixel galaxy macbook laptop phone chrome firefox safari edge "
    "brave vivaldi opera slack teams zoom notion obsidian spotify netflix version update system software "
    "stack framework language editor vscode vim emacs python rust golang java typescript"
).split())


def looks_like_name(value: str) -> bool:
    words = value.casefold().split()
    return bool(words) and not any(w in NOT_NAMES or _NATIONALITY.search(w) for w in words)


def looks_like_place(value: str) -> bool:
    words = value.casefold().split()
    if not words or words[0] in ("a", "an", "my", "our", "his", "her", "their", "some", "another"):
        return False
    if len(words) == 1 and words[0] in _WHEN_WORDS:
        return False  # "we signed the lease in August": a time, not a place
    return words[-1] not in DWELLINGS and words[-1] not in NOT_PLACES


_WHEN_WORDS = frozenset("january february march april may june july august september october november december "
                        "monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter "
                        "christmas easter".split())


def tech_talk(text: str) -> bool:
    """The text names software, a device or a plan ("moved over to Brave, Chrome was too slow"): a
    "move" in it is no move of home."""
    return any(w in NOT_PLACES for w in re.findall(r"[a-z]+", text.casefold()))


SOFTWARE = frozenset((
    "browser app apps platform os linux windows macos ubuntu chrome firefox safari brave vivaldi slack zoom notion "
    "obsidian spotify netflix software extension plugin"
).split())


def software_talk(text: str) -> bool:
    """The text names software ("moved over to Brave, Chrome was too slow"): no device changed."""
    return any(w in SOFTWARE for w in re.findall(r"[a-z]+", text.casefold()))


def looks_like_job(value: str) -> bool:
    """For a bare "I'm a <noun phrase>": is the head noun a job title?"""
    words = re.findall(r"[a-z][\w-]*", value.casefold())
    if not words or len(words) > 4:
        return False
    head = words[-1]
    if head in NOT_JOBS:
        return False
    return head in JOBS or bool(_JOB_SUFFIX.search(head))


# -- a cheap pre-check per rule --------------------------------------------------------------
def needs(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Lower-case substrings at least one of which every match of ``pattern`` contains, or None.

    Read from the parsed regex: a literal run is required where it is not optional; an
    alternation requires one of its branches' sets. ``facts_in`` skips a rule whose set does not
    occur in the clause (``in`` on a string is ~50 ns; a regex search is ~5 us)."""
    import re._parser as parser  # the stdlib's own parser: the same tree re compiles

    return _required(parser.parse(pattern.pattern, pattern.flags))


def _required(seq: Any) -> frozenset[str] | None:
    from re._constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN

    found: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        text = "".join(run).lower()
        if len(text.strip()) >= 3:
            found.append(frozenset({text}))
        run.clear()

    for op, av in seq:
        if op is LITERAL:
            run.append(chr(av))
            continue
        flush()
        sub: frozenset[str] | None = None
        if op is SUBPATTERN:
            sub = _required(av[3])
        elif op is BRANCH:
            alts = [_required(branch) for branch in av[1]]
            sub = None if any(a is None for a in alts) else frozenset(x for a in alts if a for x in a)
        elif op in (MAX_REPEAT, MIN_REPEAT) and av[0] >= 1:
            sub = _required(av[2])
        if sub:
            found.append(sub)
    flush()
    if not found:
        return None
    return max(found, key=lambda s: (min(len(x) for x in s), -len(s)))


RULE_NEEDS: list[frozenset[str] | None] = [needs(rule[0]) for rule in RULES]
ALL_NEEDS: tuple[str, ...] = tuple(sorted({n for need in RULE_NEEDS if need for n in need}))
_NEEDS_BY_PAIR: dict[str, tuple[str, ...]] = {}
for _n in ALL_NEEDS:
    if len(_n) >= 2:
        _NEEDS_BY_PAIR[_n[:2]] = (*_NEEDS_BY_PAIR.get(_n[:2], ()), _n)
_SHORT_NEEDS = tuple(n for n in ALL_NEEDS if len(n) < 2)


def present_needs(low: str) -> set[str]:
    """``{n for n in ALL_NEEDS if n in low}``, at a fraction of the cost: a literal can only occur
    where its first two characters do, so only the literals starting with a pair ``low`` holds are
    looked up (~25 of ~420 in a short clause)."""
    found = {n for n in _SHORT_NEEDS if n in low}
    for pair in {low[i:i + 2] for i in range(len(low) - 1)}:
        for n in _NEEDS_BY_PAIR.get(pair, ()):
            if n in low:
                found.add(n)
    return found
