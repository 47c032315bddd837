"""The English tagging rules (the type and the reading order: `rules.py`)."""

from __future__ import annotations

from app.distill.heuristic.rules import ANY_ROLE, Rule, rule

_ADV = r"(?:really |also |just |usually |always |generally |definitely |still |actually |mostly |totally )?"
_OBJ = r"(?P<obj>[\w'$€£¥.,-]+(?: [\w'$€£¥.,-]+){0,5}?)"  # a short object phrase, cut at punctuation
_END = r"(?=[,.;!?]| and | but | because | so |$)"
_WEEKDAY_OR_DATE = (
    r"(?:tomorrow|today|tonight|next|this|the end|end of|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|noon|midnight|\d{1,2}(?::\d\d|\s?[ap]\.?m\b|/\d|(?:st|nd|rd|th)\b))"
)
# "That must have been exhausting", "You must be so proud": a guess about the other, not a requirement
_EPISTEMIC = (
    r"(?!'ve\b| have been\b| be (?:so|really|such|very|quite|pretty|a (?:great|huge|real))\b| feel\b|"
    r" be (?:nice|great|fun|hard|tough|amazing|awesome|exciting|excited|proud|cool|lovely|wonderful|special|"
    r"scary|exhausting|tiring|rewarding|difficult|crazy|incredible|fulfilling|meaningful|liberating|"
    r"thrilled|happy|glad|relieved|busy|tired)\b)"
)
_MONEY = r"[$€£¥]?\s?\d[\d,.]*\s?(?:k|usd|dollars?|euros?|eur|rmb|yuan|bucks)?"
_JOBS = (
    r"engineer|developer|programmer|teacher|doctor|nurse|student|designer|manager|lawyer|artist|writer|"
    r"scientist|researcher|counselor|chef|consultant|accountant|analyst|architect|photographer|musician|"
    r"founder|ceo|cto|professor|pilot|driver|salesperson|marketer|therapist|pharmacist|dentist|farmer"
)
_FAMILY = (
    r"wife|husband|partner|boyfriend|girlfriend|fiancée?|son|daughter|kids?|children|child|mom|mum|"
    r"mother|dad|father|parents|brother|sister|siblings?|grandma|grandmother|grandpa|grandfather|"
    r"family|dog|cat|puppy|kitten|pets?"
)

EN_RULES: tuple[Rule, ...] = (
    # corrections first: they also carry the tag of what they correct
    rule(
        "correction",
        r"^(?:actually|correction|sorry,? i meant|i meant|i mean,|wait,? (?:no|it'?s|my)|"
        r"no,? (?:it'?s|it is|make (?:that|it))|let me correct|scratch that|make (?:that|it) )",
        0.9,
        0.7,
    ),
    # "not X but Y" (not "not only X but also Y")
    rule("correction", r"\bnot (?!only\b|just\b)\w+(?: \w+){0,2},? but (?!also\b)(?:rather )?\w", 0.85, 0.7),
    # "X, not Y" at the end: the value given instead of another ("the meeting is at 4pm, not 3pm")
    rule("correction", r"\w, not (?:the |a |an |on |at |in )?[\w:.-]+(?: \w+)?[.!]?$", 0.85, 0.7),
    # constraints
    rule("constraint.budget", r"\bbudget\b", 0.9, 0.85, relation="has_budget", object_type="amount"),
    rule(
        "constraint.budget",
        rf"\b(?:can|could) (?:only )?(?:afford|spend|pay|go (?:up )?to) (?:up to |about )?{_MONEY}",
        0.9,
        0.85,
    ),
    rule(
        "constraint.budget",
        r"\b(?:no more than|at most|up to|not (?:to )?exceed|under|less than|maximum of|max)"
        r"\s*[$€£¥]\s?\d",
        0.9,
        0.85,
    ),
    rule("constraint.budget", r"\b(?:willing to (?:pay|spend)|price range|spending limit)\b", 0.85, 0.85),
    rule("constraint.time", r"\bdeadline\b", 0.9, 0.8),
    rule(
        "constraint.time",
        # not "until": it bounds a span ("open until 9 pm", "stayed up until midnight")
        rf"\b(?:by|before|no later than|due(?: on| by)?)\s+(?:the )?{_WEEKDAY_OR_DATE}",
        0.85,
        0.8,
    ),
    rule(
        "constraint.time", r"\bwithin (?:\d+|a|an|one|two|three) (?:hours?|days?|weeks?|months?)\b", 0.85, 0.8
    ),
    rule(
        "constraint.quantity",
        r"\b(?:need|want|order|buy|require|book|reserve)s?\s+(?:exactly |at least )?"
        r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|a dozen)\s+[a-z]+",
        0.85,
        0.7,
    ),
    rule(
        "constraint.quantity",
        r"\b(?:at least|at most|no more than|no fewer than) \d+\b(?! ?(?:%|dollars|usd|eur))",
        0.85,
        0.7,
    ),
    rule(
        "constraint.quantity",
        r"\b(?:for|party of|group of) \d+ (?:people|persons|guests|adults|kids|of us)\b",
        0.85,
        0.7,
    ),
    rule(
        "constraint.diet",
        r"\b(?:allergic to|allergy|vegetarian|vegan|gluten[- ]free|lactose[- ]intolerant|"
        r"halal|kosher|(?:can'?t|cannot|don'?t|do not) eat)\b",
        0.9,
        0.9,
    ),
    rule(
        "constraint.location",
        r"\b(?:must|has to|needs to|should) be (?:in|near|close to|within)\b|"
        r"\bdeliver(?:y|ed)? to\b",
        0.85,
        0.7,
    ),
    rule(
        "constraint",
        rf"\b(?:must{_EPISTEMIC}(?: not)?|mustn'?t|has to be|have to be|should(?: not|n'?t) be|is required|"
        r"requirement|mandatory|not allowed|is a must)\b(?!-)",  # not "a must-see"
        0.8,
        0.7,
        loose=True,
    ),
    # preferences (the sub-tag comes from the topic table below)
    rule(
        "preference",
        rf"\bI(?: {_ADV}(?:prefer|like|love|enjoy|adore)|(?:'d| would) {_ADV}(?:prefer|rather))"
        rf"\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="prefers",
    ),
    rule(
        "preference",
        rf"\bI(?:'m| am) {_ADV}(?:a (?:big |huge )?fan of|into|keen on|fond of)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="prefers",
    ),
    rule(
        "preference",
        rf"\bI {_ADV}(?:hate|dislike|detest|don'?t (?:really )?like|do not like|can'?t stand)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="dislikes",
    ),
    rule(
        "preference",
        rf"\bI(?:'m| am) {_ADV}not (?:a (?:big |huge )?fan of|into|keen on|fond of)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="dislikes",
    ),
    rule("preference", r"\bmy (?:absolute )?favou?rite\b", 0.85, 0.6, loose=True),
    rule("preference", r"\b(?:prefer|rather)\b.*\b(?:over|than|instead of)\b", 0.85, 0.6),
    # facts
    rule(
        "fact.identity",
        r"\b(?i:my name(?:'s| is))\s+(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+)?)",
        0.95,
        0.8,
        relation="is_named",
        object_type="person",
        flags=0,
    ),
    rule(
        "fact.identity",
        r"\b(?i:call me|I'm called|I am called)\s+(?P<obj>[A-Z][\w-]+)",
        0.9,
        0.8,
        relation="is_named",
        object_type="person",
        flags=0,
    ),
    rule("fact.identity", r"\bI(?:'m| am) (?P<obj>\d{1,3}) (?:years old|yo)\b", 0.95, 0.7, relation="age"),
    rule(
        "fact.identity",
        r"\bI(?:'m| am) (?:a |an )?(?:\w+ )?(?:woman|man|transgender|trans woman|trans man|"
        r"non-?binary|gay|lesbian|bisexual|american|british|chinese|german|french|indian|canadian|"
        r"australian|japanese|swedish|mexican|spanish|italian)\b",
        0.85,
        0.7,
    ),
    rule(
        "fact.work",
        rf"\bI (?i:{_ADV}work(?:ed)? (?:at|for)) (?P<obj>[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*){{0,3}})",
        0.9,
        0.7,
        relation="works_at",
        object_type="organization",
        flags=0,
    ),
    rule(
        "fact.work",
        rf"\bI(?:'m| am) (?:a|an) (?:\w+ ){{0,2}}(?P<obj>{_JOBS})s?\b",
        0.9,
        0.7,
        relation="works_as",
    ),
    rule(
        "fact.work",
        r"\bmy (?:job|company|employer|boss|manager|office|role|position|career|workplace)\b",
        0.85,
        0.65,
        loose=True,
    ),
    rule("fact.work", r"\bI (?:work|worked) as\b", 0.9, 0.7),
    rule(
        "fact.location",
        rf"\bI {_ADV}(?:live|lived|am based|'m based|moved|grew up|relocated) (?:in|to|at)\s+"
        r"(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+){0,2})",
        0.9,
        0.75,
        relation="lives_in",
        object_type="place",
        flags=0,
    ),
    rule(
        "fact.location",
        r"\bI(?:'m| am) (?:originally )?from\s+(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+){0,2})",
        0.9,
        0.75,
        relation="is_from",
        object_type="place",
        flags=0,
    ),
    rule("fact.location", r"\bmy (?:address|hometown|home town|home city)\b", 0.9, 0.75),
    rule("fact.id", r"(?<![A-Za-z0-9])[A-Z]{2,6}-\d{3,}(?![0-9])", 0.95, 0.75, roles=ANY_ROLE, flags=0),
    rule(
        "fact.id",
        r"\b(?:order|account|ticket|booking|reservation|invoice|tracking|confirmation|customer|"
        r"membership|case|policy) (?:number|no\.?|id|#|code)\b",
        0.9,
        0.75,
        roles=ANY_ROLE,
    ),
    # an address or a number starts where its run starts (linear on a 30,000-character run)
    rule(
        "fact.contact",
        r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+\b|(?<!\d)(?<!\d[ -])\+?\d[\d -]{7,}\d",
        0.9,
        0.75,
    ),
    rule(
        "fact.contact",
        r"\b(?:reach|contact|email|call|text|message) me (?:at|on|via|by)\b|"
        r"\bmy (?:email|e-mail|phone|number|cell|mobile|whatsapp|wechat|telegram|handle)\b",
        0.9,
        0.75,
    ),
    rule("fact.family", rf"\bI have (?:a |an |\d+ |two |three |four )?(?:{_FAMILY})\b", 0.85, 0.65),
    rule("fact.family", rf"\bmy (?:{_FAMILY})\b", 0.85, 0.65, loose=True),
    rule(
        "fact.education",
        r"\bI (?:study|studied|graduated|majored|major|am studying|'m studying)\b",
        0.85,
        0.65,
    ),
    rule(
        "fact.education",
        r"\bmy (?:school|university|college|degree|major|thesis|class(?:es)?)\b",
        0.85,
        0.65,
        loose=True,
    ),
    rule("fact", r"\bmy (?!name\b)\w+(?: \w+)? (?:is|are|was|were) (?!\w+ing\b)\w", 0.8, 0.55, loose=True),
    # task state (any role: the assistant and tools report progress too)
    rule(
        "task_state",
        r"\b(?:is|are|has been|have been|was|were|got) (?:now |already |just )?(?:done|completed|"
        r"finished|verified|confirmed|shipped|delivered|paid|resolved|cancell?ed|approved|booked|submitted|"
        r"sent|fixed|closed|refunded|processed|scheduled|on hold)\b",
        0.85,
        0.5,
        roles=ANY_ROLE,
    ),
    rule(
        "task_state",
        # perfect tense or "already/just" ("I have verified", "I just paid"), not a plain past ("I paid")
        r"\b(?:I|we)(?:(?:'ve| have)(?: already| just)?|(?: already| just)) (?:paid|submitted|booked|sent|"
        r"signed|verified|confirmed|ordered|cancell?ed|uploaded|filed|scheduled|processed|refunded|resolved|"
        r"fixed|completed|finished|updated|reset)\b",
        0.85,
        0.5,
        roles=ANY_ROLE,
    ),
    rule(
        "task_state",
        r"\b(?:pending|in progress|waiting (?:for|on)|on hold|not (?:done|finished) yet|to-?do|"
        r"blocked on|still need to|next step)\b",
        0.8,
        0.5,
        roles=ANY_ROLE,
    ),
)
