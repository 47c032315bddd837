"""The built-in tag taxonomy. Tags are dotted and hierarchical: a query for `constraint` covers
`constraint.budget`. Banks add their own in `config.tags`."""

from __future__ import annotations

TAXONOMY: dict[str, str] = {
    "fact": "something true about a person or the world",
    "fact.identity": "name, age, gender, nationality",
    "fact.work": "job, employer, role",
    "fact.location": "where someone lives or is from, addresses",
    "fact.id": "order, account, ticket or booking numbers (ORD-12345)",
    "fact.contact": "email, phone, preferred channel details",
    "fact.family": "family members, partners, pets",
    "fact.education": "school, degree, studies",
    "fact.event": "a life event, experience, plan or change, dated (adopted a puppy, moved to Denver)",
    "preference": "likes and dislikes",
    "preference.food": "food and drink",
    "preference.contact": "how to be contacted",
    "preference.travel": "seats, hotels, trips",
    "preference.schedule": "times of day, days",
    "preference.style": "tone, format, design",
    "preference.entertainment": "music, films, books, hobbies",
    "constraint": "a hard requirement",
    "constraint.budget": "money limits",
    "constraint.time": "deadlines, dates",
    "constraint.quantity": "counts, sizes",
    "constraint.diet": "allergies, dietary rules",
    "constraint.location": "where something must happen or be delivered",
    "task_state": "progress of a task: done, pending, waiting",
    "correction": "corrects something said before",
    "episode": "conversational context that states no fact: what was discussed, asked or said",
}


def bank_taxonomy(extra: list[str]) -> list[str]:
    return list(TAXONOMY) + [t for t in extra if t not in TAXONOMY]
