"""LangGraph's prebuilt ReAct agent over langchain-openai's ChatOpenAI, pointed at ctxgraph.

The agent is what a LangGraph tutorial builds; only the base URL and the key (CTXGRAPH_BASE,
CTXGRAPH_KEY) point it at ctxgraph, and the model is one that a configured provider lists
(no provider prefix). It runs a two-step tool loop to completion (find the order, then track
it) and prints one JSON object: the agent's messages and the X-Ctxgraph-* headers of every
model call. integration/dropin_test.go runs it and checks what the provider behind ctxgraph
received.
"""

import json
import os

import httpx
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

BASE = os.environ["CTXGRAPH_BASE"]
KEY = os.environ["CTXGRAPH_KEY"]

headers_seen = []


def keep_ctxgraph_headers(response):
    headers_seen.append({k.lower(): v for k, v in response.headers.items() if k.lower().startswith("x-ctxgraph-")})


@tool
def search_orders(customer: str) -> str:
    """Search a customer's orders; answers JSON with each order's id and status."""
    return json.dumps({"orders": [{"id": "ord_7Q2X9", "customer": customer, "status": "shipped"}]})


@tool
def track_order(order_id: str) -> str:
    """Track one order by its id; answers JSON with the carrier and the delivery date."""
    return json.dumps({"order_id": order_id, "carrier": "DHL", "eta": "2026-11-05"})


def main():
    # ChatOpenAI builds its own openai client; an httpx client with a response hook is how an
    # application reads the response headers of the calls LangChain makes for it.
    llm = ChatOpenAI(
        base_url=BASE + "/v1/openai",
        api_key=KEY,
        model="gpt-4.1",
        max_retries=0,
        http_client=httpx.Client(event_hooks={"response": [keep_ctxgraph_headers]}),
    )
    agent = create_react_agent(llm, [search_orders, track_order], prompt="You are the order desk of an online shop.")
    state = agent.invoke({"messages": [("user", "Find my latest order and tell me when it will be delivered.")]})
    messages = []
    for m in state["messages"]:
        messages.append(
            {
                "type": m.type,
                "content": m.content,
                "tool_calls": [{"id": tc["id"], "name": tc["name"], "args": tc["args"]} for tc in getattr(m, "tool_calls", [])],
                "tool_call_id": getattr(m, "tool_call_id", None),
            }
        )
    print(json.dumps({"messages": messages, "headers": headers_seen}))


if __name__ == "__main__":
    main()
