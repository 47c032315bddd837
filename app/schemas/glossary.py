"""What each field of the API means, in one place: a field that states no `description` of its own gets
the glossary's, by `Schema.field` first, then by field name (a name means the same in every schema
unless a `Schema.field` entry says otherwise). The OpenAPI test fails on a field neither gives."""

from __future__ import annotations

from typing import Any

BY_NAME: dict[str, str] = {
    # ids and ownership
    "id": "The object's id.",
    "bank_id": "The bank's id (a client-chosen slug).",
    "session_id": "The session's id (a client-chosen slug); sessions are created by their first append.",
    "memory_id": "The memory unit's id.",
    "job_id": "The background job's id; follow it at `GET /v1/jobs/{job_id}`.",
    "event_id": "The raw event's id.",
    "name": "A display name.",
    "config": "The bank's config (see BankConfig); `PATCH` merges into the current one.",
    "admin": "Whether this is the admin key (every bank) rather than a bank key.",
    "agent_id": "The agent this acts or wrote as (shared memory: a key's label or the request's); null "
    "when none was named.",
    "scopes": "What a bank key may do: `read`, `write`.",
    # time
    "created_at": "When it was created (RFC 3339).",
    "updated_at": "When it last changed (RFC 3339).",
    "started_at": "When a worker last started it.",
    "finished_at": "When it succeeded or failed.",
    "occurred_at": "When the turn was said (RFC 3339; the append's time when the client gave none).",
    "last_event_at": "When the session's last event was appended.",
    "valid_from": "Valid time: since when the statement holds in the world (when it was said, or the past "
    "day it names).",
    "valid_to": "Valid time: until when it held (set when a newer value superseded it); null while in force.",
    "status_changed_at": "When the unit last changed status.",
    "expires_at": "When it expires by its tag's TTL; null: never.",
    "last_accessed_at": "When a query last returned it.",
    "at": "When it happened.",
    "from": "Start of the window (inclusive).",
    "to": "End of the window (exclusive).",
    "took_ms": "Server time the query took, in milliseconds.",
    # events and sessions
    "role": "Who spoke: `user`, `assistant`, `system` or `tool`.",
    "speaker": 'The speaker\'s name, when the client gave one (used for "I" in distilled units).',
    "seq": "The turn's number in its session: 1, 2, 3 … with no gaps.",
    "seqs": "The seqs of the source turns.",
    "event_ids": "The ids of the source events.",
    "events": "The events, in seq order.",
    "external_id": "The client's id of the turn; a repeat in the same session is not appended again.",
    "last_seq": "The session's last seq.",
    "distilled_seq": "Turns up to this seq are distilled (the watermark).",
    "appended": "Events appended by this request.",
    "duplicates": "Events not appended because their `external_id` was already in the session.",
    "content_truncated": "Whether the content shown was cut (the timeline shows the first characters).",
    # memory units
    "content": "The text: one self-contained statement for a unit, the turn verbatim for an event.",
    "tags": "Hierarchical dotted tags (`fact`, `preference`, `constraint.budget`, …); the first is the kind.",
    "confidence": "How sure the source is of it, 0..1.",
    "importance": "How much it will matter later, 0..1 (ranks and slows forgetting).",
    "layer": "`episodic` (L2, distilled) or `semantic` (L3, promoted stable knowledge).",
    "entities": "The entities it names.",
    "supersedes": "The unit this one replaced (an older value), if any.",
    "superseded_by": "The unit that replaced this one, if any.",
    "merged_from": "Units merged into this one (near-duplicates).",
    "merged_into": "The unit this one was merged into, if any.",
    "access_count": "How many query answers returned it.",
    "distiller": "What wrote it: the distiller and its version, or `api` for a direct write.",
    "embedding_model": "The embedding model of its current vector.",
    "metadata": "Free-form JSON the client attached.",
    "source": "Where it came from: the session and the turns (seqs, event ids).",
    "memory": "The memory unit.",
    "memories": "Memory units, best or newest first.",
    "score": "The final score (relative: the best unit of a query scores about 1).",
    "rank": "The unit's rank in that channel (1 = best).",
    "action": "What happened: `created`, `activated`, `superseded`, `merged`, `updated`, `deleted`, …",
    "actor": "Who did it: `api:key:<id>`, `mcp:…`, `distiller:<version>`, `resolver`, `maintenance:<task>`.",
    "details": "The action's particulars (the job, the reason, from/to statuses).",
    # entities and relations
    "type": "The entity's type: `person`, `organization`, `place`, `product`, `id`, `amount`, `date`, "
    "`contact` or `other`.",
    "entity": "The entity.",
    "subject": "The relation's subject.",
    "relation": "The relation's name, e.g. `works_at`, `lives_in`, `has_budget`.",
    "object": "The relation's object.",
    # lists and pages
    "next_cursor": "Pass as `cursor` for the next page; null on the last page.",
    "banks": "The banks, in id order.",
    "sessions": "The sessions.",
    "items": "The timeline's items, in time order.",
    # jobs
    "kind": "What kind of item it is.",
    "error": "Why it failed.",
    "phase": "`created` or `finished`.",
    # query
    "query": "The question or statement to find memory for (English or Chinese).",
    "top_k": "At most this many units.",
    "time_range": "Only units valid in this window (overrides a time the query names).",
    "statuses": "Unit statuses to search; default `active` (and `archived` for a past window).",
    "max_tokens": "Cut `context` to this many tokens (all-MiniLM WordPiece count).",
    "explain": "Add each channel's rank and raw score to every unit (`scores`).",
    "working_memory": "With `session_id`: the session's turns not yet distilled.",
    "weights": "Per-channel weights; an omitted channel keeps its default, 0 turns it off.",
    "context": "The prompt-ready block: units grouped by tag, dated, with confidence, newest first.",
    "time_filter": "The time window the query was limited to, and where it came from; null: none.",
    "phrase": "The words of the query the window was read from.",
    "params": "The query's options as sent (defaults left out).",
    "result_ids": "The ids of the units the query returned, in order.",
    # channel weights (ChannelWeights)
    "semantic": "Weight of the semantic channel (embedding cosine).",
    "keyword": "Weight of the keyword channel (full text over the query's content words).",
    "temporal": "Weight of the temporal channel (units within the time filter, or the newest).",
    "tag": "Weight of the tag channel (units under the tags the query implies).",
    "recency": "Weight of a bonus for fresh units (0, off, by default).",
}

BY_FIELD: dict[str, str] = {
    "BankRead.id": "The bank's id.",
    "BankCreate.name": "A display name for the bank.",
    "BankRead.name": "The bank's display name.",
    "BankUpdate.name": "A new display name for the bank.",
    "KeyCreate.name": "A label for the key (shown in lists, never the key itself).",
    "KeyCreated.name": "The key's label.",
    "KeyCreated.id": "The key's id (to revoke it).",
    "EntityIn.name": "The entity's name as the unit writes it.",
    "EntityRead.name": "The entity's name.",
    "EntityRef.name": "The entity's name.",
    "RelationEnd.name": "The entity's name.",
    "SessionRead.status": "`open`, or `closed` (an append reopens it).",
    "SessionClosed.status": "`closed`.",
    "MemoryRead.status": "`pending` → `active` | `superseded` | `merged`; later `expired`, `archived`, "
    "`deleted`.",
    "ScoredMemory.status": "The unit's status (`active` unless `statuses` asked for others).",
    "MemoryBrief.status": "The unit's status.",
    "EntityMemory.status": "The unit's status.",
    "TimeFilterRead.source": "`query` (read from the query's words) or `request` (`time_range`).",
    "BankStats.events": "Raw events in the bank.",
    "BankStats.sessions": "Sessions in the bank.",
    "AppendRequest.events": "1–1000 turns, in the order they were said.",
    "EventPage.events": "The events, in seq order.",
    "EntityPage.entities": "The entities, by name.",
    "MemoryCreate.entities": "Entities the unit names, besides those found in its content.",
    "EventItem.kind": "`event`.",
    "MemoryItem.kind": "`memory`.",
    "JobItem.kind": "`job`.",
    "QueryItem.kind": "`query`.",
    "JobItem.error": "Why the job failed.",
    "EventRead.metadata": "Free-form JSON the client attached to the turn.",
    "ChannelScore.score": "The channel's raw score: cosine similarity, ts_rank, 1 for a named entity …",
    "MemoryHistoryRead.memory": "The unit asked about.",
    "QueryResult.memories": "The units found, best first.",
    "QueryResult.working_memory": "The session's turns not yet distilled (asked with `working_memory` and "
    "`session_id`).",
    "QueryRequest.working_memory": "With `session_id`: add the session's turns not yet distilled.",
    "QueryRequest.weights": "Per-channel weights for this query (over the bank's).",
    "BankConfig.weights": "The bank's per-channel weights (see docs/guides/query.md).",
    "MemoryAccepted.memory": "The unit: `pending` (resolution runs in the background), or as resolved "
    "with `?wait=true`.",
    "BankConfig.timezone": 'Where a timestamp without an offset is read, and where "today" is (IANA name).',
    "BankConfig.distill_every_n_turns": "Distil a session by itself after this many new turns.",
    "BankConfig.idle_distill_seconds": "Distil a session by itself after this many seconds of silence.",
    "BankConfig.min_confidence": "Distilled units less confident than this are dropped.",
    "BankConfig.dedupe_threshold": "Cosine at or above which a new unit is merged into an older twin.",
    "BankConfig.forgetting_policy": "What `DELETE` of a unit does: `delete` (soft, restorable), "
    "`downweight` (a fifth of its importance), `never` (refused).",
    "BankConfig.fusion": "How channels are fused: `rrf` (reciprocal rank) or `weighted` (scores).",
    "BankConfig.decay_lambda": "λ of the decay task's `importance · exp(-λ·days)`.",
    "BankConfig.decay_threshold": "Under this decayed importance a unit is archived.",
    "BankStats.memories_by_status": "Units per status.",
    "BankStats.memories_by_tag": "Active units per first tag.",
    "BankStats.memories_by_layer": "Units per layer.",
    "BankStats.undistilled_events": "Events appended but not yet distilled.",
    "BankStats.queue_lag_seconds": "Age of the bank's oldest queued job.",
    "ChannelWeights.entity": "Weight of the entity channel (units linked to entities the query names).",
    "EntityDetailRead.entity": "The entity.",
    "PageEntityRead.name": "The entity's name (the bank's subject for the profile).",
    "PageLine.content": "The unit's statement, as stored.",
    "PageLine.confidence": "The unit's confidence, 0..1.",
    "KnowledgePage.entity": "Whom or what the page is about.",
    "KnowledgePage.sections": "The current units, one section per tag (superseded, forgotten: left out).",
    "WebhookCreate.url": "Where events are POSTed: `http(s)://host[:port][/path]`; private, loopback and "
    "link-local addresses are refused unless `HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true`.",
    "WebhookRead.url": "Where events are POSTed.",
    "WebhookCreated.url": "Where events are POSTed.",
    "WebhookPage.webhooks": "The bank's hooks (secrets never listed).",
    "DeliveryPage.deliveries": "What was sent to the hook, newest first.",
    "DeliveryRead.event": "The event type, e.g. `memory.superseded`.",
    "DeliveryRead.attempts": "Attempts made so far (retried with exponential backoff for up to a day).",
    "DeliveryRead.payload": "The body sent: `{type, timestamp, data}`.",
    "DeliveryRead.last_attempt_at": "When it was last tried.",
    "DeliveryRead.next_attempt_at": "When it will be tried again; null once delivered or given up.",
}


def describe(schema: dict[str, Any], model: type) -> None:
    """`json_schema_extra` of the schema bases: fill in what a field does not describe itself."""
    for field, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "description" not in prop:
            text = BY_FIELD.get(f"{model.__name__}.{field}") or BY_NAME.get(field)
            if text:
                prop["description"] = text
