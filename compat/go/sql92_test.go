package compat

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Scenario 12: SQL92 selectors (consumer.MessageSelector{Type: consumer.SQL92}). The Go push
// consumer does not filter SQL92 itself, so what it gets is what the broker selected. Two
// groups with different selectors on one topic of 48 messages with user properties
// a = i % 6, b = yes/no, price (every 5th) and tag TagA/TagB; each must get exactly the
// matching messages. Needs a broker with enablePropertyFilter=true.
func TestSql92Selector(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Sql")
	p := newProducer(t, group+"_P")

	cases := []struct {
		name string
		sql  string
		want func(i int) bool
	}{
		// a = i % 6 in {0, 2} and i even
		{"between", "a between 0 and 3 and b = 'yes'", func(i int) bool { return i%6 <= 3 && i%2 == 0 }},
		// AND binds tighter than OR; IS NULL for a missing property; numeric compare of a string property; IN
		{"tagsNullIn", "TAGS = 'TagA' AND price IS NULL OR price > 300 OR a IN ('5')",
			func(i int) bool { return (i%4 == 0 && i%5 != 0) || (i%5 == 0 && i*10 > 300) || i%6 == 5 }},
		// NOT, <>, string equality, numeric >= on another property
		{"notAndNe", "NOT (b = 'yes') AND a <> 3 AND a >= 1", func(i int) bool { return i%2 == 1 && i%6 != 3 && i%6 >= 1 }},
	}

	const total = 48
	wants := make([][]expected, len(cases))
	for i := 0; i < total; i++ {
		tag := "TagB"
		if i%4 == 0 {
			tag = "TagA"
		}
		props := map[string]string{"a": strconv.Itoa(i % 6), "b": "no"}
		if i%2 == 0 {
			props["b"] = "yes"
		}
		if i%5 == 0 {
			props["price"] = strconv.Itoa(i * 10)
		}
		body := []byte(fmt.Sprintf("sql-%s-%02d", runID(), i))
		key := fmt.Sprint("k", i)
		m := primitive.NewMessage(topic, body)
		m.WithProperties(copyProps(props))
		m.WithTag(tag).WithKeys([]string{key})
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, m)
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		for c := range cases {
			if cases[c].want(i) {
				wants[c] = append(wants[c], expected{body: body, tag: tag, keys: key, props: props, msgID: res.MsgID})
			}
		}
	}

	cols := make([]*collector, len(cases))
	for c, tc := range cases {
		cols[c] = newCollector()
		startPushConsumer(t, topic, group+"_"+tc.name, cols[c], pushOpts{
			model:    consumer.Clustering,
			selector: consumer.MessageSelector{Type: consumer.SQL92, Expression: tc.sql},
		})
	}
	for c, tc := range cases {
		if !cols[c].waitFor(t, len(wants[c]), consumeTimeout) {
			t.Errorf("%s (%s): only %d of %d matching messages consumed within %s", tc.name, tc.sql, cols[c].count(), len(wants[c]), consumeTimeout)
		}
	}
	time.Sleep(1500 * time.Millisecond) // wrongly selected messages would show up
	for c, tc := range cases {
		t.Logf("%s: %q selects %d of %d", tc.name, tc.sql, len(wants[c]), total)
		if len(wants[c]) == 0 || len(wants[c]) == total {
			t.Fatalf("%s: selector picks %d of %d, the case would prove nothing", tc.name, len(wants[c]), total)
		}
		checkReceived(t, wants[c], cols[c].snapshot(), topic)
		cols[c].mu.Lock()
		if cols[c].dups != 0 {
			t.Errorf("%s: %d duplicate deliveries", tc.name, cols[c].dups)
		}
		cols[c].mu.Unlock()
	}
}
