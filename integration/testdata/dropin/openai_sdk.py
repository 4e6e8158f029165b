"""An application written against the official openai Python SDK, pointed at ctxgraph.

It changes nothing but the base URL and the key (CTXGRAPH_BASE, CTXGRAPH_KEY) and prints one
JSON object of what it observed: every answer, the tool call ids, and the X-Ctxgraph-* headers
of each response. integration/dropin_test.go runs it and checks what the provider behind
ctxgraph received.

One conversation, kept by metadata.ctxgraph_thread, carries the plain turn, the tool loop over
three turns, the retried request and the edited message; the streamed turn is a conversation
of its own, found by the hash of its first system and user messages. Last, the errors the SDK
raises for a key ctxgraph does not know and a model no provider serves.
"""

import json
import os

import openai

BASE = os.environ["CTXGRAPH_BASE"]
KEY = os.environ["CTXGRAPH_KEY"]
MODEL = "openai/gpt-4.1"
THREAD = {"ctxgraph_thread": "orders-ada"}
SYSTEM = "You are the support assistant of an online shop."

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_orders",
            "description": "Search a customer's orders.",
            "parameters": {
                "type": "object",
                "properties": {
                    "customer": {"type": "string"},
                    "which": {"type": "string", "enum": ["latest", "oldest"]},
                },
                "required": ["customer"],
            },
        },
    }
]

# No retries: every request the provider sees is one this program made; the retried request
# below is made on purpose.
client = openai.OpenAI(base_url=BASE + "/v1/openai", api_key=KEY, max_retries=0)


def search_orders(customer, which="latest"):
    """The application's tool: what its order database answers."""
    return {"orders": [{"id": "ord_7Q2X9", "customer": customer, "status": "shipped", "placed": "2026-11-02", "total": "42.50 EUR"}]}


def ctxgraph_headers(headers):
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith("x-ctxgraph-")}


def observed(resp, headers):
    """What one non-streamed answer carried."""
    choice = resp.choices[0]
    calls = [
        {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments}
        for tc in (choice.message.tool_calls or [])
    ]
    return {
        "content": choice.message.content,
        "finish_reason": choice.finish_reason,
        "tool_calls": calls,
        "usage": resp.usage.model_dump() if resp.usage else None,
        "headers": headers,
    }


def refusal(call):
    """The error the SDK raised for a refused request: its class, status and parsed body."""
    try:
        call()
    except openai.APIStatusError as e:
        return {"class": type(e).__name__, "status": e.status_code, "body": e.body}
    return None


def create(messages, **kw):
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL, messages=messages, metadata=THREAD, tools=TOOLS, **kw
    )
    resp = raw.parse()
    return resp, observed(resp, ctxgraph_headers(raw.headers))


def main():
    out = {"models": [m.id for m in client.models.list()]}

    # (a) A plain turn.
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hi, I am Ada Lovelace and I have a question about my orders."},
    ]
    resp, out["plain"] = create(messages)
    messages.append(resp.choices[0].message)
    common = list(messages)

    # (c) The tool loop: the model calls search_orders, the application answers the call as
    # a tool message, and a later turn needs the order id only the tool's result held.
    loop = []
    messages.append({"role": "user", "content": "Find my latest order."})
    resp, seen = create(messages)
    loop.append(seen)
    messages.append(resp.choices[0].message)
    results = []
    for tc in resp.choices[0].message.tool_calls or []:
        result = json.dumps(search_orders(**json.loads(tc.function.arguments)))
        messages.append({"role": "tool", "tool_call_id": tc.id, "content": result})
        results.append({"tool_call_id": tc.id, "content": result})
    resp, seen = create(messages)
    loop.append(seen)
    messages.append(resp.choices[0].message)
    messages.append({"role": "user", "content": "I want to cancel it. Which order id should I quote?"})
    resp, seen = create(messages)
    loop.append(seen)
    messages.append(resp.choices[0].message)
    out["tools"] = {"turns": loop, "results": results}

    # (d) A retried request: exactly the same list twice, as a client does whose connection
    # dropped before the answer arrived.
    messages.append({"role": "user", "content": "Thanks, that is all for today."})
    _, first = create(messages)
    _, second = create(messages)
    out["retry"] = {"first": first, "second": second}

    # (e) The user edits the message that started the tool loop, as in a chat app: the list
    # is cut after it and sent again.
    edited = common + [{"role": "user", "content": "Find my oldest order."}]
    _, out["edit"] = create(edited)

    # (b) A streamed turn with the usage chunk, in a conversation of its own.
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "You answer questions about shipping."},
            {"role": "user", "content": "Which carriers do you ship with?"},
        ],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, usage, finish, chunks = "", None, None, 0
    for chunk in raw.parse():
        chunks += 1
        if chunk.usage:
            usage = chunk.usage.model_dump()
        for c in chunk.choices:
            text += c.delta.content or ""
            finish = c.finish_reason or finish
    out["stream"] = {
        "content": text,
        "finish_reason": finish,
        "usage": usage,
        "chunks": chunks,
        "headers": ctxgraph_headers(raw.headers),
    }

    # (f) Refusals as the SDK raises them: a key ctxgraph does not know, a model no provider
    # serves.
    out["errors"] = {
        "bad_key": refusal(lambda: openai.OpenAI(base_url=BASE + "/v1/openai", api_key="not-a-ctxgraph-key", max_retries=0)
                           .chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])),
        "unknown_model": refusal(lambda: client.chat.completions.create(
            model="nowhere/no-such-model", messages=[{"role": "user", "content": "hi"}])),
    }

    print(json.dumps(out))


if __name__ == "__main__":
    main()
