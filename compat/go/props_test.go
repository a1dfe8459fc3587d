package compat

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Scenario 6: unicode tags/keys/property values, "empty-ish" property values, binary bodies
// and bodies above the client's 4 KiB compression threshold (sent zlib-compressed with the
// compressed sysFlag) must arrive byte-identical.
func TestPropertiesUnicodeAndLargeBody(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Props")
	p := newProducer(t, group+"_P")

	uniProps := map[string]string{
		"uni_zh":      "中文属性值：你好，世界",
		"uni_emoji":   "emoji 😀🚀 ✓",
		"uni_mix":     "Grüße · ñ · Ж · العربية",
		"space":       " ",
		"inner_space": "a  b",
		"dash":        "-",
		"zero":        "0",
		"json":        `{"k":[1,2],"s":"v=x;y"}`,
	}
	rnd := rand.New(rand.NewSource(42))
	random := make([]byte, 200*1024)
	rnd.Read(random)
	allBytes := make([]byte, 0, 512)
	for i := 0; i < 512; i++ {
		allBytes = append(allBytes, byte(i))
	}

	type spec struct {
		name  string
		body  []byte
		props map[string]string
		tag   string
		keys  []string
	}
	specs := []spec{
		{"small-unicode", []byte("props-" + runID() + "-small: héllo wörld ✓"), uniProps, "标签", []string{"ключ-1", "键-2"}},
		{"binary-512", append([]byte("props-"+runID()+"-bin:"), allBytes...), map[string]string{"kind": "binary"}, "Bin", []string{"b"}},
		{"text-4097", []byte(("props-" + runID() + "-4097:" + strings.Repeat("0123456789abcdef", 300))[:4097]), map[string]string{"kind": "text", "uni_zh": uniProps["uni_zh"]}, "Big", []string{"k4097"}},
		{"text-64k", []byte("props-" + runID() + "-64k:" + strings.Repeat("RocketMQ compat ✓ ", 4000)), uniProps, "Big", []string{"k64k"}},
		{"random-200k", append([]byte("props-"+runID()+"-rnd:"), random...), map[string]string{"kind": "random", "uni_emoji": uniProps["uni_emoji"]}, "Big", []string{"krnd"}},
	}

	var want []expected
	for i, s := range specs {
		m := primitive.NewMessage(topic, append([]byte(nil), s.body...))
		props := copyProps(s.props)
		if s.name == "small-unicode" {
			props["empty"] = "" // WithProperty ignores empty values; WithProperties does not
		}
		m.WithProperties(props) // replaces the map: before WithTag / WithKeys
		m.WithTag(s.tag).WithKeys(s.keys)
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, m)
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		want = append(want, expected{body: s.body, tag: s.tag, keys: strings.Join(s.keys, " "), props: s.props, msgID: res.MsgID})
	}

	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, len(want), consumeTimeout) {
		t.Errorf("only %d of %d messages consumed within %s", col.count(), len(want), consumeTimeout)
	}
	got := col.settle(500 * time.Millisecond)
	checkReceived(t, want, got, topic)

	for _, s := range specs {
		m, ok := got[string(s.body)]
		if !ok {
			continue
		}
		if !bytes.Equal(m.Body, s.body) {
			t.Errorf("%s: body differs (len %d vs %d)", s.name, len(m.Body), len(s.body))
		}
		if len(s.body) > 4096 {
			t.Logf("%s: %d bytes, stored sysFlag=%#x (compressed flag %v)", s.name, len(s.body), m.SysFlag, m.SysFlag&primitive.FlagCompressed != 0)
		}
		if s.name == "small-unicode" {
			v, present := m.GetProperties()["empty"]
			t.Logf("property with empty value: present=%v value=%q", present, v)
			if present && v != "" {
				t.Errorf("property \"empty\" came back as %q", v)
			}
		}
	}
}
