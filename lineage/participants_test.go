package lineage

import (
	"reflect"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// A copy knows the participants of every read it was given, whatever their order, and
// answers only for ids it knows all of.
func TestParticipantsKnownFromReads(t *testing.T) {
	dev := model.Participant{ID: "pt_1", Kind: "model", Name: "dev", Provider: "echo", Model: "m1", Instructions: "be brief"}
	ops := model.Participant{ID: "pt_2", Kind: "model", Name: "ops", Provider: "openai", Model: "gpt"}
	c := NewConversation("cnv_1", 0)
	// The later read lists both; an older one, merged after it, lists dev alone.
	c.KnowParticipants([]model.Participant{dev, ops})
	c.KnowParticipants([]model.Participant{dev})
	tests := []struct {
		name   string
		ids    []string
		want   []model.Participant
		wantOK bool
	}{
		{"both, in the order asked", []string{"pt_2", "pt_1"}, []model.Participant{
			{ID: "pt_2", ConversationID: "cnv_1", Kind: "model", Name: "ops", Provider: "openai", Model: "gpt"},
			{ID: "pt_1", ConversationID: "cnv_1", Kind: "model", Name: "dev", Provider: "echo", Model: "m1"}}, true},
		{"one unknown: none", []string{"pt_1", "pt_3"}, nil, false},
		{"none asked", nil, []model.Participant{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := c.Participants(tt.ids)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v, want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if _, ok := NewConversation("cnv_2", 0).Participants([]string{"pt_1"}); ok {
		t.Error("got a participant from a copy that was never given one, want none")
	}
}
