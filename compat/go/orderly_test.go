package compat

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// one delivery to the orderly listener
type orderlyDelivery struct {
	key            string
	seq            int
	reconsumeTimes int32
	queue          int
	offset         int64
}

// Scenario: ordered messages. A producer with the hash queue selector sends 6 sharding keys × 20
// messages, interleaved, so every key's messages land in one queue; an orderly push consumer
// (WithConsumerOrder: LOCK_BATCH_MQ before it pulls, one consume call at a time per queue) gets
// every key's messages in the order they were sent. One message of key k0 is refused with
// SuspendCurrentQueueAMoment every time: the client delivers it again (ReconsumeTimes 0, 1, 2
// with MaxReconsumeTimes 1), holds back the rest of its queue meanwhile, then sends it back with
// delay level -1, which the broker puts straight into %DLQ%<group>; after that the queue goes on.
func TestOrderlyShardingKeys(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Orderly")
	dlqTopic := "%DLQ%" + group
	p := newProducer(t, group+"_P", producer.WithQueueSelector(producer.NewHashQueueSelector()))

	const keys, perKey, poisonSeq = 6, 20, 5
	poisonBody := fmt.Sprintf("orderly-%s-k0-%03d", runID(), poisonSeq)
	queueOfKey := map[string]int{}
	var poisonRes *primitive.SendResult
	send := func(fromSeq, toSeq int) {
		for seq := fromSeq; seq < toSeq; seq++ {
			for k := 0; k < keys; k++ {
				key := "k" + strconv.Itoa(k)
				body := fmt.Sprintf("orderly-%s-%s-%03d", runID(), key, seq)
				m := primitive.NewMessage(topic, []byte(body)).WithTag("Ord").WithKeys([]string{key + "-" + strconv.Itoa(seq)}).WithShardingKey(key)
				ctx, cancel := callCtx()
				res, err := p.SendSync(ctx, m)
				cancel()
				if !checkSendResult(t, seq, topic, res, err) {
					t.FailNow()
				}
				if q, ok := queueOfKey[key]; ok && q != res.MessageQueue.QueueId {
					t.Fatalf("%s: seq %d went to queue %d, earlier ones to %d (hash selector)", key, seq, res.MessageQueue.QueueId, q)
				}
				queueOfKey[key] = res.MessageQueue.QueueId
				if body == poisonBody {
					poisonRes = res
				}
			}
		}
	}
	// half before the consumer starts (a backlog), half while it runs
	send(0, perKey/2)

	var (
		mu         sync.Mutex
		deliveries []orderlyDelivery
		inCall     = map[int]bool{}
		overlap    []string
	)
	handler := func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		if _, ok := primitive.GetOrderlyCtx(ctx); !ok {
			t.Errorf("no ConsumeOrderlyContext in the orderly listener's context")
		}
		result := consumer.ConsumeSuccess
		mu.Lock()
		q := -1
		if len(msgs) > 0 && msgs[0].Queue != nil {
			q = msgs[0].Queue.QueueId
		}
		if inCall[q] {
			overlap = append(overlap, fmt.Sprintf("queue %d", q))
		}
		inCall[q] = true
		for _, m := range msgs {
			parts := strings.Split(string(m.Body), "-")
			seq, err := strconv.Atoi(parts[len(parts)-1])
			if err != nil || len(parts) < 3 {
				t.Errorf("unexpected body %q", m.Body)
				continue
			}
			deliveries = append(deliveries, orderlyDelivery{parts[len(parts)-2], seq, m.ReconsumeTimes, m.Queue.QueueId, m.QueueOffset})
			if string(m.Body) == poisonBody {
				result = consumer.SuspendCurrentQueueAMoment
			}
		}
		mu.Unlock()
		// a consume call that lasts a little, so that overlapping calls on one queue would show
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		inCall[q] = false
		mu.Unlock()
		return result, nil
	}
	startPushConsumer(t, topic, group, nil, pushOpts{
		model:   consumer.Clustering,
		handler: handler,
		extra: []consumer.Option{
			consumer.WithConsumerOrder(true),
			consumer.WithMaxReconsumeTimes(1),
			consumer.WithSuspendCurrentQueueTimeMillis(500 * time.Millisecond),
		},
	})
	send(perKey/2, perKey)

	snapshot := func() []orderlyDelivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]orderlyDelivery(nil), deliveries...)
	}
	complete := func(ds []orderlyDelivery) bool {
		seen := map[string]bool{}
		for _, d := range ds {
			seen[fmt.Sprintf("%s-%d", d.key, d.seq)] = true
		}
		return len(seen) == keys*perKey
	}
	if !pollUntil(consumeTimeout, func() bool { return complete(snapshot()) }) {
		t.Fatalf("not every message was delivered within %s (%d deliveries)", consumeTimeout, len(snapshot()))
	}

	// the poisoned message in the dead-letter queue
	dlqQueues := awaitRoute(t, dlqTopic, routeTimeout)
	pc := startPullConsumer(t, dlqTopic, group+"_DLQReader", "dlq")
	var dead []*primitive.MessageExt
	if !pollUntil(20*time.Second, func() bool {
		dead = nil
		for _, mq := range dlqQueues {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := pc.PullFrom(ctx, mq, 0, 32)
			cancel()
			if err == nil && r.Status == primitive.PullFound {
				dead = append(dead, primitive.DecodeMessage(r.GetBody())...)
			}
		}
		return len(dead) > 0
	}) {
		t.Fatalf("nothing in %s within 20s", dlqTopic)
	}
	if len(dead) != 1 {
		t.Errorf("%s holds %d messages, want 1", dlqTopic, len(dead))
	}
	d := dead[0]
	t.Logf("DLQ: topic=%s msgId=%s reconsumeTimes=%d props=%v", d.Topic, d.MsgId, d.ReconsumeTimes, d.GetProperties())
	if string(d.Body) != poisonBody || d.GetTags() != "Ord" {
		t.Errorf("DLQ message body %q tag %q, want %q / Ord", d.Body, d.GetTags(), poisonBody)
	}
	if d.MsgId != poisonRes.MsgID {
		t.Errorf("DLQ MsgId %q, want the original %q", d.MsgId, poisonRes.MsgID)
	}
	if rt := d.GetProperty(primitive.PropertyRetryTopic); rt != topic {
		t.Errorf("DLQ RETRY_TOPIC %q, want %q", rt, topic)
	}
	if o := d.GetProperty(primitive.PropertyOriginMessageId); o != poisonRes.OffsetMsgID {
		t.Errorf("DLQ ORIGIN_MESSAGE_ID %q, want the original's OffsetMsgID %q", o, poisonRes.OffsetMsgID)
	}

	time.Sleep(time.Second) // nothing more may come
	all := snapshot()
	byKey := map[string][]orderlyDelivery{}
	for _, d := range all {
		byKey[d.key] = append(byKey[d.key], d)
	}
	ks := make([]string, 0, len(byKey))
	for k := range byKey {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		var seqs []string
		for _, d := range byKey[k] {
			if d.queue != queueOfKey[k] {
				t.Errorf("%s seq %d delivered from queue %d, sent to %d", k, d.seq, d.queue, queueOfKey[k])
			}
			seqs = append(seqs, strconv.Itoa(d.seq)+"/"+strconv.Itoa(int(d.reconsumeTimes)))
		}
		want := []string{}
		for seq := 0; seq < perKey; seq++ {
			if k == "k0" && seq == poisonSeq {
				want = append(want, strconv.Itoa(seq)+"/0", strconv.Itoa(seq)+"/1", strconv.Itoa(seq)+"/2")
				continue
			}
			want = append(want, strconv.Itoa(seq)+"/0")
		}
		if strings.Join(seqs, " ") != strings.Join(want, " ") {
			t.Errorf("%s (queue %d): deliveries seq/reconsumeTimes\n  got  %s\n  want %s", k, queueOfKey[k], strings.Join(seqs, " "), strings.Join(want, " "))
		}
	}
	if len(overlap) > 0 {
		t.Errorf("consume calls overlapped on one queue %d times (%v)", len(overlap), overlap[0])
	}
}
