package compat

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Scenario 10: messages sent with WithDelayTimeLevel(1) and (2) (1 s and 5 s with the default
// messageDelayLevel) reach a running consumer of the original topic no earlier than due
// (less 10% for clock granularity, like the Java scenario's ≥ 4 s for level 2) and not much
// later; a message without a delay level sent with them arrives at once.
func TestDelayTimeLevel(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Delay")
	p := newProducer(t, group+"_P")
	const slack = 8 * time.Second // lateness allowed on a loaded machine

	ctx, cancel := callCtx()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("delay-"+runID()+"-create")).WithTag("D").WithKeys([]string{"create"}))
	cancel()
	if !checkSendResult(t, 0, topic, res, err) {
		t.FailNow()
	}

	type delivery struct {
		at  time.Time
		msg *primitive.MessageExt
	}
	var (
		mu     sync.Mutex
		got    = map[string][]delivery{}
		notify = make(chan struct{}, 1)
	)
	handler := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		mu.Lock()
		for _, m := range msgs {
			got[m.GetKeys()] = append(got[m.GetKeys()], delivery{now, m})
		}
		mu.Unlock()
		select {
		case notify <- struct{}{}:
		default:
		}
		return consumer.ConsumeSuccess, nil
	}
	has := func(keys ...string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range keys {
			if len(got[k]) == 0 {
				return false
			}
		}
		return true
	}
	startPushConsumer(t, topic, group, nil, pushOpts{model: consumer.Clustering, handler: handler})
	if !pollUntil(consumeTimeout, func() bool { return has("create") }) {
		t.Fatalf("the topic-creating message was not consumed within %s", consumeTimeout)
	}

	specs := []struct {
		key   string
		level int
		delay time.Duration
	}{
		{"level2", 2, 5 * time.Second},
		{"level1", 1, time.Second},
		{"plain", 0, 0},
	}
	sentAt := map[string]time.Time{}
	sent := map[string]*primitive.SendResult{}
	for i, s := range specs {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("delay-%s-%s", runID(), s.key))).WithTag("D").WithKeys([]string{s.key})
		if s.level > 0 {
			m.WithDelayTimeLevel(s.level)
		}
		sentAt[s.key] = time.Now()
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, m)
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		sent[s.key] = res
	}
	deadline := 5*time.Second + slack + 2*time.Second
	if !pollUntil(deadline, func() bool { return has("level2", "level1", "plain") }) {
		mu.Lock()
		t.Errorf("delivered within %s: level2=%d level1=%d plain=%d", deadline, len(got["level2"]), len(got["level1"]), len(got["plain"]))
		mu.Unlock()
		t.FailNow()
	}
	time.Sleep(1500 * time.Millisecond) // a second delivery would show up
	mu.Lock()
	defer mu.Unlock()
	for _, s := range specs {
		ds := got[s.key]
		if len(ds) != 1 {
			t.Errorf("%s: delivered %d times, want once", s.key, len(ds))
		}
		d := ds[0]
		took := d.at.Sub(sentAt[s.key])
		t.Logf("%s (delay level %d, %s): delivered after %d ms", s.key, s.level, s.delay, took.Milliseconds())
		min := s.delay - s.delay/5
		if took < min {
			t.Errorf("%s: delivered after %d ms, before its delay %s (at least %s)", s.key, took.Milliseconds(), s.delay, min)
		}
		if took > s.delay+slack {
			t.Errorf("%s: delivered after %d ms, more than %s late", s.key, took.Milliseconds(), slack)
		}
		m := d.msg
		if m.Topic != topic || (m.Queue != nil && m.Queue.Topic != topic) {
			t.Errorf("%s: topic %q (queue %v), want %q", s.key, m.Topic, m.Queue, topic)
		}
		if want := fmt.Sprintf("delay-%s-%s", runID(), s.key); string(m.Body) != want || m.GetTags() != "D" {
			t.Errorf("%s: body %q tag %q", s.key, m.Body, m.GetTags())
		}
		if m.MsgId != sent[s.key].MsgID {
			t.Errorf("%s: MsgId %q, want %q", s.key, m.MsgId, sent[s.key].MsgID)
		}
		if m.ReconsumeTimes != 0 {
			t.Errorf("%s: ReconsumeTimes %d", s.key, m.ReconsumeTimes)
		}
		if s.level > 0 {
			t.Logf("%s: properties %v", s.key, m.GetProperties())
			if rt := m.GetProperty(primitive.PropertyRealTopic); rt != topic {
				t.Errorf("%s: REAL_TOPIC %q, want %q", s.key, rt, topic)
			}
			// the Java broker delivers the message with its delay level still set
			if dl := m.GetProperty(primitive.PropertyDelayTimeLevel); dl != fmt.Sprint(s.level) {
				t.Errorf("%s: DELAY %q, want %q", s.key, dl, fmt.Sprint(s.level))
			}
		} else if dl := m.GetProperty(primitive.PropertyDelayTimeLevel); dl != "" {
			t.Errorf("%s: DELAY %q on a message sent without a delay level", s.key, dl)
		}
	}
	if len(got) != 4 {
		t.Errorf("deliveries for %d keys, want 4 (create, level1, level2, plain)", len(got))
	}
}
