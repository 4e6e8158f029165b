package extract_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/ctxgraph/ctxgraph/extract"
)

func TestStatedValues(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want []string
	}{
		{
			name: "identifiers, codes, dates, amounts and a name",
			text: "My access token is tok_9f8e7d and I fly from SFO on 2026-03-14; budget $1,250. Ask Maria Lopez.",
			max:  10,
			want: []string{"tok_9f8e7d", "SFO", "2026-03-14", "$1,250", "Maria Lopez"},
		},
		{
			name: "order number, email, url and path",
			text: "Order #A77 was sent to maria@example.com, see https://shop.example.com/o/A77?x=1. Logs are in /var/log/app.log.",
			max:  10,
			want: []string{"A77", "maria@example.com", "https://shop.example.com/o/A77?x=1", "/var/log/app.log"},
		},
		{
			name: "quoted strings without their quotes, apostrophes ignored",
			text: `I'm booking "Blue Lagoon Hotel" for the team's trip, code 'XJ-4'.`,
			max:  10,
			want: []string{"Blue Lagoon Hotel", "XJ-4"},
		},
		{
			name: "month dates and times join",
			text: "The meeting with Ana Silva moved to March 14, 2026 at 10:30 am in Lisbon.",
			max:  10,
			want: []string{"Ana Silva", "March 14, 2026", "10:30 am"},
		},
		{
			name: "a name that opens a sentence keeps its first word unless it is common",
			text: "Please call John Smith. Maria Lopez approved it.",
			max:  10,
			want: []string{"John Smith", "Maria Lopez"},
		},
		{
			name: "common words and shouting are not values",
			text: "PLEASE can you check this OK thanks",
			max:  10,
			want: nil,
		},
		{
			name: "duplicates once, capped at max",
			text: "BK-48213 and BK-48213 again, then BK-1 and BK-2 and BK-3",
			max:  3,
			want: []string{"BK-48213", "BK-1", "BK-2"},
		},
		{
			name: "max zero",
			text: "BK-48213",
			max:  0,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := extract.StatedValues(tt.text, tt.max)
			var texts []string
			for _, v := range got {
				texts = append(texts, v.Text)
				var start, end int
				if _, err := fmt.Sscanf(v.Locator, "bytes=%d-%d", &start, &end); err != nil {
					t.Fatalf("locator %q: %v", v.Locator, err)
				}
				if tt.text[start:end] != v.Text {
					t.Errorf("locator %q: got %q, want %q", v.Locator, tt.text[start:end], v.Text)
				}
			}
			if !reflect.DeepEqual(texts, tt.want) {
				t.Errorf("got %q, want %q", texts, tt.want)
			}
		})
	}
}
