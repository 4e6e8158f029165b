package seed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ctxgraph/ctxgraph/client"
)

// The synthetic content.

type participantSpec struct{ name, provider, model string }

var participantBank = []participantSpec{
	{"analyst-gpt", "openai", "gpt-4.1"},
	{"reviewer-claude", "anthropic", "claude-sonnet-4-5"},
	{"researcher-gemini", "google", "gemini-2.5-pro"},
	{"drafter-mistral", "mistral", "mistral-large-latest"},
}

type toolKind int

const (
	kindSearch toolKind = iota
	kindCSV
	kindCRM
	kindTicket
	kindGmail
	kindFile
	kindPicker
	kindApproval
)

// kindWeights is the mix of tool calls: searches, CSV reads and connected-app records
// dominate; generated files, Gmail threads, document pickers (deferred) and approvals
// (pending) are rarer.
var kindWeights = []struct {
	kind   toolKind
	weight int
}{
	{kindSearch, 27}, {kindCSV, 18}, {kindCRM, 15}, {kindTicket, 11}, {kindGmail, 5},
	{kindFile, 10}, {kindPicker, 3}, {kindApproval, 2},
}

func (p *planner) pickKind() toolKind {
	total := 0
	for _, w := range kindWeights {
		total += w.weight
	}
	n := p.rng.IntN(total)
	for _, w := range kindWeights {
		if n < w.weight {
			return w.kind
		}
		n -= w.weight
	}
	return kindSearch
}

func (k toolKind) tool() string {
	return [...]string{"web_search", "read_csv", "salesforce_get_account", "zendesk_get_ticket", "gmail_get_thread",
		"generate_file", "pick_document", "send_email"}[k]
}

func (k toolKind) version() string {
	return [...]string{"search/4.1.0", "csv/1.8.2", "salesforce/59.0", "zendesk/2.4.1", "gmail/1.0.7",
		"files/3.2.0", "picker/2.3.0", "mail/1.1.0"}[k]
}

func (k toolKind) canFail() bool {
	return k == kindSearch || k == kindCSV || k == kindCRM || k == kindTicket || k == kindGmail
}

func (k toolKind) freshness(r *rand.Rand) string {
	f := r.Float64()
	switch k {
	case kindSearch:
		if f < 0.7 {
			return "volatile"
		}
		return "bounded"
	case kindCSV:
		if f < 0.75 {
			return "bounded"
		}
		return "durable"
	case kindCRM:
		switch {
		case f < 0.4:
			return "volatile"
		case f < 0.85:
			return "bounded"
		}
		return "durable"
	case kindTicket:
		if f < 0.8 {
			return "volatile"
		}
		return "bounded"
	case kindGmail:
		return "bounded"
	}
	return "durable"
}

func (k toolKind) fact(topic string) string {
	switch k {
	case kindSearch:
		return "I searched the web for " + topic + "."
	case kindCSV:
		return "I read " + topic + "."
	case kindCRM:
		return "I pulled the Salesforce account " + topic + "."
	case kindTicket:
		return "I looked up ticket " + topic + "."
	case kindGmail:
		return "I read the Gmail thread about " + topic + "."
	case kindFile:
		return "I generated " + topic + "."
	case kindPicker:
		return "You picked the document for " + topic + "."
	}
	return "Done: " + topic + "."
}

var (
	companies = []string{"Northwind", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella Health", "Stark Logistics",
		"Wayne Foods", "Acme Robotics", "Hooli", "Vandelay Imports", "Tyrell Systems", "Cyberdyne", "Oceanic Air",
		"Blue Sun", "Monarch Freight", "Soylent Labs", "Massive Dynamic", "Pied Piper", "Gringotts Capital",
		"Aperture Science", "Wonka Confections", "Sirius Cybernetics", "Duff Beverages"}
	regions  = []string{"EU", "NA", "APAC", "LATAM", "MEA", "UK", "DACH", "Nordics"}
	subjects = []string{"battery storage subsidies", "lithium spot price", "container freight rates", "EU AI Act obligations",
		"SOC 2 Type II requirements", "GPU cloud pricing", "interest rate outlook", "solar panel tariffs",
		"semiconductor lead times", "carbon credit prices", "cold-chain logistics market", "warehouse robotics vendors",
		"B2B SaaS churn benchmarks", "cyber insurance premiums", "DORA compliance deadline", "office lease rates",
		"heat pump adoption", "copper futures", "air cargo capacity", "payments fraud trends"}
	datasets = []string{"revenue", "bookings", "pipeline", "churn", "inventory", "shipments", "support_volume", "headcount",
		"marketing_spend", "ar_aging"}
	quarters   = []string{"2025-q3", "2025-q4", "2026-q1", "2026-q2"}
	sources    = []string{"reuters.com", "ft.com", "bloomberg.com", "theverge.com", "gartner.com", "statista.com", "europa.eu", "mckinsey.com", "wsj.com", "techcrunch.com"}
	people     = []string{"Priya Raman", "Dev Anand", "Marta Kowalczyk", "Gareth Lloyd", "Aiko Tanaka", "Lucas Moreau", "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Tom Becker"}
	stages     = []string{"Prospecting", "Qualification", "Proposal", "Negotiation", "Closed Won", "Renewal Pending"}
	priorities = []string{"low", "normal", "high", "urgent"}
	statuses   = []string{"new", "open", "pending", "on-hold", "solved"}
	words      = strings.Fields(`the market analysts expect growth demand pricing supply quarter year report outlook
		rose fell percent according to data new regulation companies customers contract renewal forecast revenue
		margin cost increase decline stable region segment vendor adoption survey shows risk rate policy capacity
		signals shift strong weak early late trend investment budget share leading major smaller mid-size firms`)
)

// topic picks a subject for a call of kind. The pools are small enough that subjects come
// back, so later memories supersede or contradict earlier ones.
func (p *planner) topic(k toolKind) string {
	r := p.rng
	switch k {
	case kindSearch:
		return subjects[r.IntN(len(subjects))] + " " + regions[r.IntN(3)]
	case kindCSV:
		return "finance/" + datasets[r.IntN(len(datasets))] + "_" + quarters[r.IntN(len(quarters))] + ".csv"
	case kindCRM:
		return companies[r.IntN(len(companies))]
	case kindTicket:
		return fmt.Sprintf("ZD-%d", 48100+r.IntN(40))
	case kindGmail:
		return companies[r.IntN(len(companies))] + " contract renewal"
	case kindFile:
		return fmt.Sprintf("%s-%s-summary.%s", strings.ToLower(regions[r.IntN(len(regions))]), datasets[r.IntN(len(datasets))],
			[]string{"xlsx", "pdf", "pptx", "png"}[r.IntN(4)])
	case kindPicker:
		return "signed MSA for " + companies[r.IntN(len(companies))]
	}
	return "the " + companies[r.IntN(len(companies))] + " renewal update"
}

func arguments(r *rand.Rand, k toolKind, topic string) json.RawMessage {
	switch k {
	case kindSearch:
		return mustJSON(map[string]any{"query": topic, "num": 8 + r.IntN(5), "recency": []string{"day", "week", "month"}[r.IntN(3)]})
	case kindCSV:
		return mustJSON(map[string]any{"path": topic, "delimiter": ",", "maxRows": 5000})
	case kindCRM:
		return mustJSON(map[string]any{"accountName": topic, "include": []string{"contacts", "opportunities", "activity"}})
	case kindTicket:
		return mustJSON(map[string]any{"ticketId": topic, "includeComments": true})
	case kindGmail:
		return mustJSON(map[string]any{"query": "subject:(" + topic + ")", "maxMessages": 6})
	case kindFile:
		return mustJSON(map[string]any{"name": topic, "template": "quarterly-summary", "sources": 1 + r.IntN(4)})
	case kindPicker:
		return mustJSON(map[string]any{"prompt": "Please pick the " + topic, "mimeTypes": []string{"application/pdf"}})
	}
	return mustJSON(map[string]any{"to": strings.ToLower(strings.ReplaceAll(people[r.IntN(len(people))], " ", ".")) + "@example.com",
		"subject": "Re: " + topic, "body": sentence(r, 30+r.IntN(40))})
}

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	b.WriteByte('.')
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func hexID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return hex.EncodeToString(b)
}

func userMessage(r *rand.Rand, k toolKind, topic string) string {
	switch k {
	case kindSearch:
		return []string{"What's the latest on " + topic + "? Search and summarise the key numbers.",
			"Can you look up recent news about " + topic + "?",
			"Find current sources on " + topic + " and tell me what changed."}[r.IntN(3)]
	case kindCSV:
		return []string{"Load " + topic + " and give me the totals by region.",
			"Which accounts drive most of the numbers in " + topic + "?",
			"Check " + topic + " for anomalies against last quarter."}[r.IntN(3)]
	case kindCRM:
		return "Where do we stand with " + topic + "? Pull the account from Salesforce."
	case kindTicket:
		return "What's the status of support ticket " + topic + "?"
	case kindGmail:
		return "Summarise my email thread about the " + topic + "."
	case kindFile:
		return "Generate " + topic + " from what we have so far."
	case kindPicker:
		return "Use the " + topic + " from my drive to check the renewal terms."
	}
	return "Draft and send an email about " + topic + "."
}

func assistantMessage(r *rand.Rand, facts []string) string {
	var b strings.Builder
	for _, f := range facts {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	b.WriteString(sentence(r, 12+r.IntN(25)))
	return b.String()
}

type toolMemory struct {
	summary, safeSummary string
	data                 any
}

// payload generates a successful result of kind and the memory derived from it.
func payload(r *rand.Rand, k toolKind, topic string) (json.RawMessage, toolMemory) {
	switch k {
	case kindSearch:
		return searchResults(r, topic)
	case kindCSV:
		return csvBody(r, topic)
	case kindCRM:
		return crmAccount(r, topic)
	case kindTicket:
		return ticket(r, topic)
	case kindGmail:
		return gmailThread(r, topic)
	case kindFile:
		return generatedFile(r, topic)
	case kindPicker:
		return pickedDocument(r, topic)
	}
	return mustJSON(map[string]any{"sent": true}), toolMemory{summary: "Email sent: " + topic}
}

func searchResults(r *rand.Rand, query string) (json.RawMessage, toolMemory) {
	type hit struct {
		Title     string `json:"title"`
		URL       string `json:"url"`
		Source    string `json:"source"`
		Published string `json:"published"`
		Snippet   string `json:"snippet"`
	}
	n := 6 + r.IntN(5)
	hits := make([]hit, n)
	for i := range hits {
		src := sources[r.IntN(len(sources))]
		title := strings.ToUpper(query[:1]) + query[1:] + ": " + sentence(r, 5+r.IntN(5))
		hits[i] = hit{Title: title, URL: fmt.Sprintf("https://www.%s/%s/%s", src, quarters[r.IntN(len(quarters))], hexID(r, 6)),
			Source: src, Published: fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28)), Snippet: sentence(r, 14+r.IntN(18))}
	}
	pct := r.IntN(40) - 15
	raw := mustJSON(map[string]any{"query": query, "engine": "brave", "totalResults": 1000 + r.IntN(90000), "results": hits})
	return raw, toolMemory{
		summary: fmt.Sprintf("Search '%s': %d results; %s reports %+d%% change (%s).", query, n, hits[0].Source, pct, hits[0].Published),
		data:    map[string]any{"query": query, "topUrl": hits[0].URL, "changePct": pct},
	}
}

func csvBody(r *rand.Rand, path string) (json.RawMessage, toolMemory) {
	rows := 70 + r.IntN(500)
	if r.Float64() < 0.05 {
		rows = 1350 + r.IntN(200) // about 100 KB: the blob store's side of the 64 KiB line
	}
	var b strings.Builder
	b.Grow(rows * 80)
	b.WriteString("date,region,account,sku,units,unit_price,revenue,currency,channel\n")
	totals := map[string]int{}
	for i := 0; i < rows; i++ {
		region := regions[r.IntN(len(regions))]
		units := 1 + r.IntN(400)
		price := 20 + r.IntN(980)
		totals[region] += units * price
		fmt.Fprintf(&b, "2026-%02d-%02d,%s,%s,SKU-%05d,%d,%d.%02d,%d,EUR,%s\n", 1+r.IntN(12), 1+r.IntN(28), region,
			companies[r.IntN(len(companies))], r.IntN(30000), units, price, r.IntN(100), units*price,
			[]string{"direct", "partner", "online"}[r.IntN(3)])
	}
	best, bestRev := "", 0
	for _, region := range regions {
		if totals[region] > bestRev {
			best, bestRev = region, totals[region]
		}
	}
	raw := mustJSON(map[string]any{"path": path, "rows": rows, "columns": 9, "encoding": "utf-8", "csv": b.String()})
	return raw, toolMemory{
		summary: fmt.Sprintf("%s: %d rows; top region %s with EUR %.2fM revenue.", path, rows, best, float64(bestRev)/1e6),
		data:    map[string]any{"path": path, "rows": rows, "topRegion": best, "topRegionRevenue": bestRev},
	}
}

func crmAccount(r *rand.Rand, name string) (json.RawMessage, toolMemory) {
	contacts := make([]map[string]any, 3+r.IntN(6))
	for i := range contacts {
		person := people[r.IntN(len(people))]
		contacts[i] = map[string]any{"name": person, "title": []string{"VP Finance", "CTO", "Procurement Lead", "Head of IT", "COO"}[r.IntN(5)],
			"email":         strings.ToLower(strings.ReplaceAll(person, " ", ".")) + "@" + strings.ToLower(strings.Fields(name)[0]) + ".example",
			"lastContacted": fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28))}
	}
	stage := stages[r.IntN(len(stages))]
	arr := (50 + r.IntN(950)) * 1000
	renewal := fmt.Sprintf("2027-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
	raw := mustJSON(map[string]any{
		"object": "account", "id": "001" + hexID(r, 7), "name": name, "owner": people[r.IntN(len(people))],
		"industry": []string{"Logistics", "Healthcare", "Retail", "Manufacturing", "Finance"}[r.IntN(5)],
		"arr":      arr, "currency": "EUR", "stage": stage, "renewalDate": renewal, "healthScore": 40 + r.IntN(60),
		"contacts":          contacts,
		"openOpportunities": []map[string]any{{"id": "006" + hexID(r, 7), "name": name + " expansion", "amount": arr / 4, "closeDate": renewal}},
		"notes":             sentence(r, 30+r.IntN(120)),
	})
	return raw, toolMemory{
		summary: fmt.Sprintf("%s: stage %s, ARR EUR %dk, renewal %s.", name, stage, arr/1000, renewal),
		data:    map[string]any{"account": name, "stage": stage, "arr": arr, "renewalDate": renewal},
	}
}

func ticket(r *rand.Rand, id string) (json.RawMessage, toolMemory) {
	comments := make([]map[string]any, 2+r.IntN(4))
	for i := range comments {
		comments[i] = map[string]any{"author": people[r.IntN(len(people))], "public": r.IntN(2) == 0,
			"createdAt": fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(11), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
			"body":      sentence(r, 25+r.IntN(25))}
	}
	status, priority := statuses[r.IntN(len(statuses))], priorities[r.IntN(len(priorities))]
	company := companies[r.IntN(len(companies))]
	raw := mustJSON(map[string]any{"id": id, "subject": company + ": " + sentence(r, 6), "status": status, "priority": priority,
		"requester": people[r.IntN(len(people))], "organization": company, "tags": []string{"billing", "sso", "api"}[:1+r.IntN(3)],
		"comments": comments})
	return raw, toolMemory{
		summary: fmt.Sprintf("Ticket %s (%s): %s, priority %s, %d comments.", id, company, status, priority, len(comments)),
		data:    map[string]any{"ticketId": id, "status": status, "priority": priority},
	}
}

func gmailThread(r *rand.Rand, subject string) (json.RawMessage, toolMemory) {
	msgs := make([]map[string]any, 2+r.IntN(4))
	for i := range msgs {
		msgs[i] = map[string]any{"from": people[r.IntN(len(people))], "date": fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28)),
			"snippet": sentence(r, 20+r.IntN(20))}
	}
	uplift := 2 + r.IntN(7)
	raw := mustJSON(map[string]any{"threadId": hexID(r, 8), "subject": "Re: " + subject, "labels": []string{"INBOX", "IMPORTANT"}, "messages": msgs})
	return raw, toolMemory{
		summary:     fmt.Sprintf("Gmail thread '%s': %d messages; counterpart asks for a %d%% uplift cap.", subject, len(msgs), uplift),
		safeSummary: "A Gmail thread about a contract renewal was read; its content is restricted (google_derived).",
		data:        map[string]any{"messages": len(msgs), "upliftCapPct": uplift},
	}
}

func generatedFile(r *rand.Rand, name string) (json.RawMessage, toolMemory) {
	fileID := "file_" + hexID(r, 8)
	size := 20000 + r.IntN(900000)
	sum := sha256.Sum256([]byte(fileID))
	raw := mustJSON(map[string]any{"fileId": fileID, "name": name, "bytes": size, "sha256": hex.EncodeToString(sum[:]),
		"url": "https://files.example.com/" + fileID, "pages": 1 + r.IntN(12)})
	return raw, toolMemory{
		summary: fmt.Sprintf("Generated %s (fileId %s, %d KB).", name, fileID, size/1000),
		data:    map[string]any{"fileId": fileID, "name": name},
	}
}

func pickerWaiting(r *rand.Rand, topic string) map[string]any {
	return map[string]any{"state": "awaiting_user", "pickerId": "pk_" + hexID(r, 6), "prompt": "Please pick the " + topic,
		"expiresInSeconds": 86400}
}

func pickedDocument(r *rand.Rand, topic string) (json.RawMessage, toolMemory) {
	docID := "doc_" + hexID(r, 8)
	raw := mustJSON(map[string]any{"documentId": docID, "name": strings.ReplaceAll(topic, " ", "_") + ".pdf", "pages": 4 + r.IntN(30),
		"pickedAt": "after user action", "excerpt": sentence(r, 40)})
	return raw, toolMemory{
		summary: fmt.Sprintf("User picked %s (documentId %s).", topic, docID),
		data:    map[string]any{"documentId": docID},
	}
}

func pickError(r *rand.Rand, k toolKind, retryable bool) client.ToolError {
	if retryable {
		e := []client.ToolError{
			{Code: "rate_limited", Message: "HTTP 429 Too Many Requests: retry after 20 seconds"},
			{Code: "timeout", Message: k.tool() + ": upstream did not answer within 30s"},
			{Code: "upstream_unavailable", Message: "HTTP 503 Service Unavailable from the " + k.tool() + " backend"},
			{Code: "connection_reset", Message: "read tcp 10.0.3.17:52114: connection reset by peer"},
		}
		return e[r.IntN(len(e))]
	}
	e := []client.ToolError{
		{Code: "invalid_argument", Message: "column 'revenue_eur' does not exist"},
		{Code: "permission_denied", Message: "the connected account lacks scope " + k.tool() + ".read"},
		{Code: "not_found", Message: "no record matches the given id"},
	}
	return e[r.IntN(len(e))]
}
