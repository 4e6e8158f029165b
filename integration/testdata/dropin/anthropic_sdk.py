"""An application written against the official anthropic Python SDK, pointed at ctxgraph.

It changes nothing but the base URL and the key (CTXGRAPH_BASE, CTXGRAPH_KEY) and prints one
JSON object of what it observed: a tool loop (tool_use, then tool_result, then the final
text), a streamed turn after it (messages.stream), with the X-Ctxgraph-* headers of each
response, and the errors the SDK raises for an unknown key and an unknown model. The conversation is kept by metadata.user_id. integration/dropin_test.go runs it
and checks what the provider behind ctxgraph received.
"""

import json
import os

import anthropic

BASE = os.environ["CTXGRAPH_BASE"]
KEY = os.environ["CTXGRAPH_KEY"]
MODEL = "anthropic/claude-sonnet-4-5"
SYSTEM = "You are the support assistant of an online shop."
METADATA = {"user_id": "orders-grace"}

TOOLS = [
    {
        "name": "search_orders",
        "description": "Search a customer's orders.",
        "input_schema": {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]},
    }
]

# No retries: every request the provider sees is one this program made.
client = anthropic.Anthropic(base_url=BASE + "/v1/anthropic", api_key=KEY, max_retries=0)


def search_orders(customer):
    """The application's tool: what its order database answers."""
    return {"orders": [{"id": "ord_7Q2X9", "customer": customer, "status": "shipped", "placed": "2026-11-02"}]}


def ctxgraph_headers(headers):
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith("x-ctxgraph-")}


def refusal(call):
    """The error the SDK raised for a refused request: its class, status and parsed body."""
    try:
        call()
    except anthropic.APIStatusError as e:
        return {"class": type(e).__name__, "status": e.status_code, "body": e.body}
    return None


def create(messages):
    raw = client.messages.with_raw_response.create(
        model=MODEL, max_tokens=1024, system=SYSTEM, tools=TOOLS, metadata=METADATA, messages=messages
    )
    msg = raw.parse()
    return msg, {
        "content": [b.model_dump() for b in msg.content],
        "stop_reason": msg.stop_reason,
        "usage": msg.usage.model_dump(),
        "headers": ctxgraph_headers(raw.headers),
    }


def main():
    out = {}
    # The tool loop as Anthropic's tool-use guide writes it: the assistant's content blocks go
    # back as they came, the results in a user turn of tool_result blocks.
    messages = [{"role": "user", "content": "Find my latest order, please."}]
    loop = []
    msg, seen = create(messages)
    loop.append(seen)
    messages.append({"role": "assistant", "content": msg.content})
    results = []
    for block in msg.content:
        if block.type == "tool_use":
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": json.dumps(search_orders(**block.input))})
    messages.append({"role": "user", "content": results})
    msg, seen = create(messages)
    loop.append(seen)
    messages.append({"role": "assistant", "content": msg.content})
    out["tools"] = {"turns": loop, "results": results}

    # A streamed turn that needs the id only the tool's result held.
    messages.append({"role": "user", "content": "I want to cancel it. Which order id should I quote?"})
    with client.messages.stream(
        model=MODEL, max_tokens=1024, system=SYSTEM, tools=TOOLS, metadata=METADATA, messages=messages
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
        headers = ctxgraph_headers(stream.response.headers)
    out["stream"] = {
        "text": text,
        "final": [b.model_dump() for b in final.content],
        "stop_reason": final.stop_reason,
        "usage": final.usage.model_dump(),
        "headers": headers,
    }
    # Refusals as the SDK raises them: a key ctxgraph does not know, a model no provider serves.
    out["errors"] = {
        "bad_key": refusal(lambda: anthropic.Anthropic(base_url=BASE + "/v1/anthropic", api_key="not-a-ctxgraph-key", max_retries=0)
                           .messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])),
        "unknown_model": refusal(lambda: client.messages.create(
            model="nowhere/no-such-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}])),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
