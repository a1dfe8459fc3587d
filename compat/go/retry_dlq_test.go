package compat

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// one delivery of a message to the retrying listener
type retryAttempt struct {
	times int32
	at    time.Time
	msg   *primitive.MessageExt
}

// Scenario 9: a clustering push consumer with MaxReconsumeTimes 2 answers ConsumeRetryLater.
// The broker re-delivers through %RETRY%<group> with ReconsumeTimes 1 and 2 and then
// puts the message into %DLQ%<group>, where a pull reads it with its message id, the
// original topic in RETRY_TOPIC and ReconsumeTimes 3.
//
//   - "ladder" leaves the delay to the broker (DelayLevelWhenNextConsume 0 → level
//     3 + reconsumeTimes: 10 s, then 30 s with the default messageDelayLevel);
//   - "fast" asks for delay level 1 (1 s) on every retry.
//
// Takes about 45 s (the ladder); RETRY_WAIT (seconds, default 90) bounds the wait.
func TestRetryThenDeadLetterQueue(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Retry")
	retryTopic, dlqTopic := "%RETRY%"+group, "%DLQ%"+group
	p := newProducer(t, group+"_P")
	const slack = 8 * time.Second // lateness allowed on a loaded machine
	ladder := map[int32]time.Duration{1: 10 * time.Second, 2: 30 * time.Second}

	ctx, cancel := callCtx()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("retry-"+runID()+"-warm")).WithTag("Warm").WithKeys([]string{"warm"}))
	cancel()
	if !checkSendResult(t, 0, topic, res, err) {
		t.FailNow()
	}

	var (
		mu       sync.Mutex
		attempts = map[string][]retryAttempt{}
		others   = map[string]int{}
	)
	handler := func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		result := consumer.ConsumeSuccess
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			k := m.GetKeys()
			if k != "fast" && k != "ladder" {
				others[k]++
				continue
			}
			attempts[k] = append(attempts[k], retryAttempt{m.ReconsumeTimes, now, m})
			result = consumer.ConsumeRetryLater
			if k == "fast" {
				cc, ok := primitive.GetConcurrentlyCtx(ctx)
				if !ok {
					t.Errorf("no ConsumeConcurrentlyContext in the listener's context")
				} else {
					cc.DelayLevelWhenNextConsume = 1
				}
			}
		}
		return result, nil
	}
	inst := nextInstance("retry")
	startPushConsumer(t, topic, group, nil, pushOpts{
		model:    consumer.Clustering,
		instance: inst,
		handler:  handler,
		extra:    []consumer.Option{consumer.WithMaxReconsumeTimes(2)},
	})
	// The consumer's first heartbeat makes the broker create %RETRY%<group>; the client would
	// only see its route at its next periodic route poll. Load it now.
	awaitRoute(t, retryTopic, routeTimeout)
	refreshRoutes(t, inst, topic, group+"_Kick")
	time.Sleep(time.Second) // let the rebalance start pulling the retry queue

	sent := map[string]*primitive.SendResult{}
	bodies := map[string]string{}
	sentAt := time.Now()
	for _, k := range []string{"fast", "ladder"} {
		bodies[k] = fmt.Sprintf("retry-%s-%s: reconsume later until the DLQ", runID(), k)
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(bodies[k])).WithTag("Re").WithKeys([]string{k}))
		cancel()
		if !checkSendResult(t, 0, topic, res, err) {
			t.FailNow()
		}
		sent[k] = res
	}

	snapshot := func() map[string][]retryAttempt {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]retryAttempt{}
		for k, v := range attempts {
			out[k] = append([]retryAttempt(nil), v...)
		}
		return out
	}
	hasTimes := func(list []retryAttempt, n int32) bool {
		for _, a := range list {
			if a.times == n {
				return true
			}
		}
		return false
	}
	wait := envSeconds(t, "RETRY_WAIT", 90*time.Second)
	if !pollUntil(wait-time.Since(sentAt), func() bool {
		s := snapshot()
		return hasTimes(s["fast"], 2) && hasTimes(s["ladder"], 2)
	}) {
		for k, list := range snapshot() {
			var times []int32
			for _, a := range list {
				times = append(times, a.times)
			}
			t.Logf("%s: deliveries with ReconsumeTimes %v", k, times)
		}
		t.Fatalf("not every message was re-delivered with ReconsumeTimes 1 and 2 within %s of sending", wait)
	}
	t.Logf("third delivery of both messages %.1fs after sending", time.Since(sentAt).Seconds())

	// read %DLQ%<group> with plain pulls
	dlqQueues := awaitRoute(t, dlqTopic, routeTimeout)
	pc := startPullConsumer(t, dlqTopic, group+"_DLQReader", "dlq")
	var dead []*primitive.MessageExt
	pullAll := func() []*primitive.MessageExt {
		var out []*primitive.MessageExt
		for _, mq := range dlqQueues {
			// pull from 0 up to the queue's max offset; a pull at the max offset would be
			// held by the broker (long polling) until its suspend timeout
			for off, max := int64(0), int64(1); off < max; {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, err := pc.PullFrom(ctx, mq, off, 32)
				cancel()
				if err != nil {
					t.Logf("pull %s queue %d from %d: %v", dlqTopic, mq.QueueId, off, err)
					break
				}
				if r.Status != primitive.PullFound || r.NextBeginOffset <= off {
					break
				}
				out = append(out, primitive.DecodeMessage(r.GetBody())...)
				off, max = r.NextBeginOffset, r.MaxOffset
			}
		}
		return out
	}
	t.Logf("DLQ reader started %.1fs after sending", time.Since(sentAt).Seconds())
	if !pollUntil(20*time.Second, func() bool {
		dead = pullAll()
		return len(dead) >= 2
	}) {
		t.Fatalf("%d messages in %s within 20s, want 2", len(dead), dlqTopic)
	}

	t.Logf("both messages read from the DLQ %.1fs after sending", time.Since(sentAt).Seconds())
	// no further delivery once the message is dead
	time.Sleep(2 * time.Second)
	final := snapshot()
	if d := pullAll(); len(d) != 2 {
		t.Errorf("%s holds %d messages, want 2", dlqTopic, len(d))
	}

	for _, k := range []string{"fast", "ladder"} {
		list := final[k]
		var times []int32
		for _, a := range list {
			times = append(times, a.times)
		}
		if fmt.Sprint(times) != "[0 1 2]" {
			t.Errorf("%s: deliveries with ReconsumeTimes %v, want [0 1 2]", k, times)
			continue
		}
		for i, a := range list {
			m := a.msg
			if m.Topic != topic {
				t.Errorf("%s delivery %d: topic %q, want the original %q", k, i, m.Topic, topic)
			}
			if string(m.Body) != bodies[k] || m.GetTags() != "Re" {
				t.Errorf("%s delivery %d: body %q tag %q", k, i, m.Body, m.GetTags())
			}
			if m.MsgId != sent[k].MsgID {
				t.Errorf("%s delivery %d: MsgId %q, want %q", k, i, m.MsgId, sent[k].MsgID)
			}
			if i > 0 {
				if rt := m.GetProperty(primitive.PropertyRetryTopic); rt != topic {
					t.Errorf("%s delivery %d: RETRY_TOPIC %q, want %q", k, i, rt, topic)
				}
				if o := m.GetProperty(primitive.PropertyOriginMessageId); o != sent[k].OffsetMsgID {
					t.Errorf("%s delivery %d: ORIGIN_MESSAGE_ID %q, want the original's OffsetMsgID %q", k, i, o, sent[k].OffsetMsgID)
				}
				if m.Queue == nil || m.Queue.Topic != retryTopic {
					t.Errorf("%s delivery %d: pulled from %v, want a queue of %s", k, i, m.Queue, retryTopic)
				}
				gap := a.at.Sub(list[i-1].at)
				want := time.Second
				if k == "ladder" {
					want = ladder[a.times]
				}
				min := want - want/10
				t.Logf("%s: retry %d came %.2fs after the previous delivery (delay %s)", k, i, gap.Seconds(), want)
				if gap < min || gap > want+slack {
					t.Errorf("%s: retry %d came %.2fs after the previous delivery, want %s (%s .. %s)", k, i, gap.Seconds(), want, min, want+slack)
				}
			}
		}
	}

	sort.Slice(dead, func(i, j int) bool { return dead[i].GetKeys() < dead[j].GetKeys() })
	for _, d := range dead {
		k := d.GetKeys()
		s, ok := sent[k]
		if !ok {
			t.Errorf("unexpected message in %s: keys %q body %q", dlqTopic, k, d.Body)
			continue
		}
		t.Logf("DLQ %s: topic=%s msgId=%s reconsumeTimes=%d props=%v", k, d.Topic, d.MsgId, d.ReconsumeTimes, d.GetProperties())
		if d.Topic != dlqTopic {
			t.Errorf("DLQ %s: topic %q, want %q", k, d.Topic, dlqTopic)
		}
		if string(d.Body) != bodies[k] || d.GetTags() != "Re" {
			t.Errorf("DLQ %s: body %q tag %q", k, d.Body, d.GetTags())
		}
		if d.MsgId != s.MsgID {
			t.Errorf("DLQ %s: MsgId %q, want the original %q", k, d.MsgId, s.MsgID)
		}
		if d.ReconsumeTimes != 3 {
			t.Errorf("DLQ %s: ReconsumeTimes %d, want 3", k, d.ReconsumeTimes)
		}
		if rt := d.GetProperty(primitive.PropertyRetryTopic); rt != topic {
			t.Errorf("DLQ %s: RETRY_TOPIC %q, want %q", k, rt, topic)
		}
		// the Java broker records the stored original's offset message id, whatever the client sends as originMsgId
		if o := d.GetProperty(primitive.PropertyOriginMessageId); o != s.OffsetMsgID {
			t.Errorf("DLQ %s: ORIGIN_MESSAGE_ID %q, want the original's OffsetMsgID %q", k, o, s.OffsetMsgID)
		}
	}
	mu.Lock()
	if others["warm"] != 1 || len(others) != 1 {
		t.Errorf("other deliveries %v, want warm once", others)
	}
	mu.Unlock()
}
