"""Runs the peers' real context strategies for the Go ports' conformance test.

Reads {"cases": [{"messages": [...], "budget": N, "liteLLMMaxTokens": M, "model": "..."}]} on
stdin, messages in ctxgraph's JSON shape (role, content, name, toolCalls [{id, name,
arguments}], toolCallId), and writes {"results": [{"langchain": [...], "clear": [...],
"litellm": [...]}]} in the same shape: LangChain's trim_messages (strategy "last",
include_system, start_on "human", max_tokens the budget), LangChain's ClearToolUsesEdit
(trigger the budget, keep 3) and LiteLLM's trim_messages (max_tokens M), each counting tokens
with count() below, the counter the Go test uses too.
"""

import json
import os
import sys

# LiteLLM would fetch its model cost map from GitHub at import; its bundled copy serves.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm.utils  # noqa: E402
from langchain.agents.middleware.context_editing import ClearToolUsesEdit  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages  # noqa: E402


def toks(text):
    return (len(text or "") + 3) // 4


def count_message(role, content, name, calls, tool_call_id):
    n = 3 + toks(role) + toks(content)
    if name:
        n += toks(name) + 1
    for call_id, call_name, arguments in calls:
        n += 3 + toks(call_id) + toks(call_name) + toks(arguments)
    if tool_call_id:
        n += toks(tool_call_id)
    return n


ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def run_case(case):
    # LangChain keeps tool call arguments as dicts; the counter and the output use the
    # arguments as sent, looked up by call id.
    arguments = {}
    for m in case["messages"]:
        for c in m.get("toolCalls") or []:
            arguments[c["id"]] = c["arguments"]

    def to_langchain(m):
        role, content, name = m["role"], m["content"], m.get("name") or None
        if role == "user":
            return HumanMessage(content=content, name=name)
        if role == "system":
            return SystemMessage(content=content, name=name)
        if role == "tool":
            return ToolMessage(content=content, tool_call_id=m["toolCallId"])
        calls = []
        for c in m.get("toolCalls") or []:
            args = json.loads(c["arguments"])
            calls.append({"name": c["name"], "args": args if isinstance(args, dict) else {"value": args}, "id": c["id"], "type": "tool_call"})
        return AIMessage(content=content, name=name, tool_calls=calls)

    def from_langchain(msg):
        out = {"role": ROLES[msg.type], "content": msg.content}
        if getattr(msg, "name", None) and msg.type != "tool":
            out["name"] = msg.name
        if msg.type == "ai" and msg.tool_calls:
            out["toolCalls"] = [{"id": c["id"], "name": c["name"], "arguments": arguments[c["id"]]} for c in msg.tool_calls]
        if msg.type == "tool":
            out["toolCallId"] = msg.tool_call_id
        return out

    def count_langchain(msgs):
        n = 3
        for msg in msgs:
            calls = [(c["id"], c["name"], arguments[c["id"]]) for c in (msg.tool_calls if msg.type == "ai" else [])]
            name = msg.name if msg.type != "tool" else None
            n += count_message(ROLES[msg.type], msg.content, name, calls,
                               msg.tool_call_id if msg.type == "tool" else None)
        return n

    def to_litellm(m):
        out = {"role": m["role"], "content": m["content"]}
        if m.get("name"):
            out["name"] = m["name"]
        if m.get("toolCalls"):
            out["tool_calls"] = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in m["toolCalls"]]
        if m.get("toolCallId"):
            out["tool_call_id"] = m["toolCallId"]
        return out

    def from_litellm(d):
        out = {"role": d["role"], "content": d["content"]}
        if d.get("name"):
            out["name"] = d["name"]
        if d.get("tool_calls"):
            out["toolCalls"] = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                                for c in d["tool_calls"]]
        if d.get("tool_call_id"):
            out["toolCallId"] = d["tool_call_id"]
        return out

    def count_litellm(model="", messages=None, **_):
        n = 3
        for d in messages or []:
            calls = [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in d.get("tool_calls") or []]
            n += count_message(d["role"], d["content"], d.get("name"), calls, d.get("tool_call_id"))
        return n

    lc = [to_langchain(m) for m in case["messages"]]
    trimmed = trim_messages(lc, max_tokens=case["budget"], token_counter=count_langchain, strategy="last",
                            include_system=True, start_on="human", allow_partial=False)

    edited = [m.model_copy(deep=True) for m in lc]
    ClearToolUsesEdit(trigger=case["budget"], keep=3).apply(edited, count_tokens=count_langchain)

    # trim_messages and the helpers it calls read the module's token_counter.
    litellm.utils.token_counter = count_litellm
    lite = litellm.utils.trim_messages([to_litellm(m) for m in case["messages"]], model=case["model"],
                                       max_tokens=case["liteLLMMaxTokens"])

    return {
        "langchain": [from_langchain(m) for m in trimmed],
        "clear": [from_langchain(m) for m in edited],
        "litellm": [from_litellm(d) for d in lite],
    }


def main():
    cases = json.load(sys.stdin)["cases"]
    json.dump({"results": [run_case(c) for c in cases]}, sys.stdout)


if __name__ == "__main__":
    main()
