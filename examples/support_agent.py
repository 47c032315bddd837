"""A support agent with long-term memory: the OpenAI SDK and `memory_session`, one turn per stdin line.

    make up    # prints the URL and a dev API key
    HINDSIGHT_API_KEY=<dev key> OPENAI_BASE_URL=<any OpenAI-compatible /v1> OPENAI_API_KEY=<its key> \\
        MODEL=<model> python examples/support_agent.py
"""

import os
import sys
import uuid

from hindsight_memory import ConflictError, Hindsight
from openai import OpenAI

BANK, MODEL = os.environ.get("HINDSIGHT_BANK", "support-demo"), os.environ.get("MODEL", "gpt-4o-mini")
llm = OpenAI()  # OPENAI_BASE_URL, OPENAI_API_KEY

with Hindsight() as hs:  # HINDSIGHT_URL (default http://127.0.0.1:8000), HINDSIGHT_API_KEY
    try:
        hs.banks.create(BANK)
    except ConflictError:
        pass  # the bank remembers earlier conversations
    with hs.memory_session(BANK, f"chat-{uuid.uuid4().hex[:8]}") as mem:  # leaving it distils the chat
        for line in sys.stdin:
            if not (question := line.strip()):
                continue
            memory = mem.recall(question) or "(nothing yet)"
            system = f"You are a friendly support agent. What you know about the user:\n{memory}"
            reply = llm.chat.completions.create(
                model=MODEL,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
            )
            answer = reply.choices[0].message.content or ""
            print(answer, flush=True)
            mem.record("user", question)
            mem.record("assistant", answer)
