"""A support agent on the OpenAI Agents SDK that decides itself what to remember and recall, with the
Hindsight memory tools (memory_write, memory_query, memory_update, memory_forget, memory_reflect).

    make up    # prints the URL and a dev API key
    HINDSIGHT_API_KEY=<dev key> OPENAI_BASE_URL=<any OpenAI-compatible /v1> OPENAI_API_KEY=<its key> \\
        MODEL=<model> python examples/agents_sdk_agent.py
"""

import asyncio
import os
import sys

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from hindsight_memory import AsyncHindsight, ConflictError
from hindsight_memory.integrations.openai_agents import memory_tools
from openai import AsyncOpenAI

BANK, MODEL = os.environ.get("HINDSIGHT_BANK", "support-demo"), os.environ.get("MODEL", "gpt-4o-mini")
INSTRUCTIONS = (
    "You are a friendly support agent. Call memory_query before answering anything about the user; "
    "call memory_write when they state a lasting fact, preference or constraint."
)


async def main() -> None:
    set_tracing_disabled(True)  # no trace upload: any OpenAI-compatible server works
    async with AsyncHindsight() as hs, AsyncOpenAI() as llm:  # HINDSIGHT_*, OPENAI_BASE_URL/OPENAI_API_KEY
        try:
            await hs.banks.create(BANK)
        except ConflictError:
            pass
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=llm)
        agent = Agent(name="support", instructions=INSTRUCTIONS, model=model, tools=memory_tools(hs, BANK))
        history: list = []
        for line in sys.stdin:
            if line.strip():
                result = await Runner.run(agent, [*history, {"role": "user", "content": line.strip()}])
                print(result.final_output, flush=True)
                history = result.to_input_list()


asyncio.run(main())
