package lineage

import "github.com/ctxgraph/ctxgraph/model"

// KnowParticipants adds participants read from the graph to the copy: their id, kind, name,
// provider and model, not their instructions, which change. Those never change, and a conversation's participants are only ever
// added to (a deletion removes them with every branch), so a participant the copy knows is
// one of the conversation's as it is now, whenever it was read; a read older than another
// only knows fewer of them.
func (c *Conversation) KnowParticipants(ps []model.Participant) {
	c.participantsMu.Lock()
	defer c.participantsMu.Unlock()
	if c.participants == nil {
		c.participants = make(map[string]model.Participant, len(ps))
	}
	for _, p := range ps {
		c.participants[p.ID] = model.Participant{ID: p.ID, ConversationID: c.id, Kind: p.Kind, Name: p.Name, Provider: p.Provider, Model: p.Model}
	}
}

// Participants returns the participants of ids as the copy knows them (KnowParticipants),
// in the order of ids, and whether it knows every one of them.
func (c *Conversation) Participants(ids []string) ([]model.Participant, bool) {
	c.participantsMu.Lock()
	defer c.participantsMu.Unlock()
	out := make([]model.Participant, 0, len(ids))
	for _, id := range ids {
		p, ok := c.participants[id]
		if !ok {
			return nil, false
		}
		out = append(out, p)
	}
	return out, true
}
