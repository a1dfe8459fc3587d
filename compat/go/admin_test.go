package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// pollUntil retries fn every 300ms until it returns true or timeout passes.
func pollUntil(timeout time.Duration, fn func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if fn() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Scenario 7: admin API (create topic with 2 queues on the broker, topic list and route
// from the nameserver, subscription groups from the broker, delete topic) plus pull-style
// reads (PullFrom per queue, offsets checked against SendResult) and a committed-offset
// check (a push consumer commits on shutdown, the next member of the group resumes there).
func TestAdminTopicAndPullOffsets(t *testing.T) {
	ns := namesrv(t)
	t.Parallel()
	topic, group := names("Admin")
	p := newProducer(t, group+"_P")

	ad, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(ns)))
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	defer ad.Close()

	// The broker address comes from the offset message id of a probe send (IP:port of the
	// store host), which is what the broker reports for itself.
	probeTopic := topic + "_probe"
	ctx, cancel := callCtx()
	pres, err := p.SendSync(ctx, primitive.NewMessage(probeTopic, []byte("probe")))
	cancel()
	if !checkSendResult(t, 0, probeTopic, pres, err) {
		t.FailNow()
	}
	brokerAddr := brokerAddrOf(t, pres)
	t.Logf("broker %s at %s (from OffsetMsgID %s)", pres.MessageQueue.BrokerName, brokerAddr, pres.OffsetMsgID)

	// create the topic explicitly with 2 read/write queues
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	err = ad.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(brokerAddr),
		admin.WithReadQueueNums(2), admin.WithWriteQueueNums(2))
	cancel()
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	var mqs []*primitive.MessageQueue
	if !pollUntil(15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		mqs, err = ad.FetchPublishMessageQueues(ctx, topic)
		return err == nil && len(mqs) > 0
	}) {
		t.Fatalf("route of created topic not visible on the nameserver within 15s: %v", err)
	}
	if len(mqs) != 2 {
		t.Errorf("FetchPublishMessageQueues: %d queues, want 2: %v", len(mqs), mqs)
	}
	var list *admin.TopicList
	if !pollUntil(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err = ad.FetchAllTopicList(ctx)
		return err == nil && containsStr(list.TopicList, topic)
	}) {
		t.Errorf("FetchAllTopicList: topic %s not listed (err %v)", topic, err)
	}

	// send and remember where each message went
	const total = 20
	type pos struct {
		q   int
		off int64
	}
	where := map[string]pos{}
	perQueue := map[int]int64{}
	for i := 0; i < total; i++ {
		body := fmt.Sprintf("admin-%s-%02d", runID(), i)
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(body)).WithTag("T"))
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		if res.MessageQueue.QueueId > 1 {
			t.Errorf("message sent to queue %d of a 2-queue topic", res.MessageQueue.QueueId)
		}
		where[body] = pos{res.MessageQueue.QueueId, res.QueueOffset}
		perQueue[res.MessageQueue.QueueId]++
	}

	// pull-style read of every queue from offset 0
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer(ns),
		consumer.WithGroupName(group+"_Pull"),
		consumer.WithInstance(nextInstance("pull")),
	)
	if err != nil {
		t.Fatalf("NewPullConsumer: %v", err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
		t.Fatalf("pull Subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer Start: %v", err)
	}
	pulled := 0
	for _, mq := range mqs {
		n := perQueue[mq.QueueId]
		if n == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		res, err := pc.PullFrom(ctx, &primitive.MessageQueue{Topic: topic, BrokerName: mq.BrokerName, QueueId: mq.QueueId}, 0, 32)
		cancel()
		if err != nil {
			t.Fatalf("PullFrom queue %d: %v", mq.QueueId, err)
		}
		if res.Status != primitive.PullFound {
			t.Fatalf("PullFrom queue %d: status %v", mq.QueueId, res.Status)
		}
		if res.MinOffset != 0 || res.MaxOffset != n || res.NextBeginOffset != n {
			t.Errorf("queue %d: min %d max %d next %d, want 0/%d/%d", mq.QueueId, res.MinOffset, res.MaxOffset, res.NextBeginOffset, n, n)
		}
		for _, m := range res.GetMessageExts() {
			pulled++
			w, ok := where[string(m.Body)]
			if !ok {
				t.Errorf("pulled unknown message %q", m.Body)
				continue
			}
			if w.q != mq.QueueId || w.off != m.QueueOffset {
				t.Errorf("%s: pulled from queue %d offset %d, sent to %d/%d", m.Body, mq.QueueId, m.QueueOffset, w.q, w.off)
			}
			if m.StoreHost != brokerAddr {
				t.Errorf("%s: StoreHost %q, want %q", m.Body, m.StoreHost, brokerAddr)
			}
		}
	}
	if pulled != total {
		t.Errorf("pulled %d messages, want %d", pulled, total)
	}
	shutdownBounded(t, "pull consumer", pc.Shutdown)

	// committed offsets: a push consumer consumes everything and commits on shutdown
	col := newCollector()
	push := startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, total, consumeTimeout) {
		t.Fatalf("push consumer got %d of %d", col.count(), total)
	}
	time.Sleep(500 * time.Millisecond) // let the consume service advance the in-memory offsets
	shutdownBounded(t, "push consumer", push.Shutdown)

	// subscription group auto-created by the consumer heartbeat
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	groups, err := ad.GetAllSubscriptionGroup(ctx, brokerAddr, 5*time.Second)
	cancel()
	if err != nil {
		t.Errorf("GetAllSubscriptionGroup: %v", err)
	} else if _, ok := groups.SubscriptionGroupTable[group]; !ok {
		t.Errorf("GetAllSubscriptionGroup: %s missing among %d groups", group, len(groups.SubscriptionGroupTable))
	}

	// Resume from the committed offsets: send more, start a new member of the same group
	// (ConsumeFromFirstOffset applies only without a committed offset): it must get exactly
	// the new messages and none of the first batch. (Reading offsets through a second live
	// group member would race with its own rebalance/persist, so this is checked by behaviour.)
	const more = 6
	var wantMore []expected
	for i := 0; i < more; i++ {
		body := []byte(fmt.Sprintf("admin-%s-more-%02d", runID(), i))
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, body).WithTag("M"))
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		wantMore = append(wantMore, expected{body: body, tag: "M", msgID: res.MsgID})
	}
	col2 := newCollector()
	push2 := startPushConsumer(t, topic, group, col2, pushOpts{model: consumer.Clustering})
	if !col2.waitFor(t, more, consumeTimeout) {
		t.Errorf("resumed consumer got %d of %d new messages", col2.count(), more)
	}
	got2 := col2.settle(2 * time.Second)
	old := 0
	for b := range got2 {
		if _, isOld := where[b]; isOld {
			old++
		}
	}
	if old > 0 {
		t.Errorf("resumed consumer re-received %d of %d already committed messages", old, total)
	}
	checkReceived(t, wantMore, got2, topic)
	shutdownBounded(t, "resumed consumer", push2.Shutdown)

	// delete the topic again; it must disappear from the nameserver's topic list
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	err = ad.DeleteTopic(ctx, admin.WithTopicDelete(topic), admin.WithBrokerAddrDelete(brokerAddr),
		admin.WithNameSrvAddr([]string(ns)))
	cancel()
	if err != nil {
		t.Errorf("DeleteTopic: %v", err)
	} else if !pollUntil(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err = ad.FetchAllTopicList(ctx)
		return err == nil && !containsStr(list.TopicList, topic)
	}) {
		t.Errorf("topic %s still listed after DeleteTopic (err %v)", topic, err)
	}
}
