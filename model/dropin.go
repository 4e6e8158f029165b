package model

import (
	"context"
	"encoding/json"
)

// ClientMessage is one message of the list a vendor-protocol client sends every call
// (DESIGN §9), whatever the protocol: a user's or an assistant's text, the tool calls an
// assistant message made, and the tool results a message carries (an OpenAI `tool`
// message carries one, an Anthropic user message any number).
type ClientMessage struct {
	Role      string
	Text      string
	ToolCalls []ClientToolCall
	Results   []ClientToolResult
	// ItemID, when set, is the id a protocol gives the item (OpenAI's Responses items): the
	// item is known by it. Reference says the client sent the id alone, for an item of an
	// answer ctxgraph gave (its tool calls then carry only their ids).
	ItemID    string
	Reference bool
}

// ClientToolCall is a tool call as the client's list names it: the id its result is paired by.
type ClientToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// ClientToolResult is a tool's result as the client sends it, paired to its call by CallID.
type ClientToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// ChainPoint is one place of a conversation's hash chain (DESIGN §9): after the first
// Length messages of a client's list, whose chain hash is SHA256. A request point is a
// list a run answered (RunID); an answer point is that list with the answer appended, the
// run left awaiting tools when the answer asked for them (Awaiting).
type ChainPoint struct {
	SHA256   string
	Length   int
	BranchID string
	// MessageID is the branch's latest message at the point: where a fork after it starts.
	MessageID string
	RunID     string
	Request   bool
	Awaiting  bool
}

// ChainHead is where a branch's client list stands: its latest answer point. Unset (Length
// zero, no SHA256) on a branch no client list was reconciled with; Empty says such a branch
// has no message in its lineage, so that a whole list may start on it.
type ChainHead struct {
	BranchID string
	SHA256   string
	Length   int
	// MessageID is the branch's latest message at the head.
	MessageID string
	RunID     string
	Awaiting  bool
	Empty     bool
}

// ChainRecord is what one reconciled call leaves: its request and answer points and the
// branch's new head, written in one transaction. When ctx carries an Idempotency-Key claim
// with a status, Answer is stored as the claim's response in that transaction.
type ChainRecord struct {
	ConversationID string
	Points         []ChainPoint
	Head           ChainHead
	Answer         any
}

// DropInGraph is what the drop-in endpoints read and write beyond the execution graph:
// conversations found by a client's stable key, and the hash chain that matches a client's
// list against a branch without reading the branch. Methods are scoped to accountID as
// ExecutionGraph's are.
type DropInGraph interface {
	// KeyedConversation finds the conversation a stable key names, creating it (as
	// CreateConversation does) on first use; two first uses at once get one conversation.
	KeyedConversation(ctx context.Context, accountID, key string, in NewConversation) (Conversation, error)
	// ChainHeads reads the heads of a conversation's branches, of branchID alone when it is
	// set (KindNotFound when it is not the conversation's).
	ChainHeads(ctx context.Context, accountID, conversationID, branchID string) ([]ChainHead, error)
	// LongestChainPoint finds, among the points of a conversation whose hash is one of
	// hashes, the one of the longest list; found is false when there is none.
	LongestChainPoint(ctx context.Context, accountID, conversationID string, hashes []string) (point ChainPoint, found bool, err error)
	// RootBranch starts a branch of a conversation that inherits no message: a list that
	// shares nothing with the conversation's begins there.
	RootBranch(ctx context.Context, accountID, conversationID, name string) (Branch, error)
	// RecordChain writes a call's points and its branch's head; KindConflict when the
	// request's claim was taken over.
	RecordChain(ctx context.Context, accountID string, in ChainRecord) error
}
