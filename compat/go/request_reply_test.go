package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// Scenario: request-reply (RPC over messages). A requester's Request stores the message with
// CORRELATION_ID, REPLY_TO_CLIENT and TTL; a push consumer answers each request with
// consumer.CreateReplyMessage sent by its own producer (SEND_REPLY_MESSAGE to
// <cluster>_REPLY_TOPIC), and the broker pushes the reply to the requester's connection
// (PUSH_REPLY_MESSAGE_TO_CLIENT), found by its client id. Three requests one after another,
// one through RequestAsync; each gets the reply made for it.
//
// CreateReplyMessage in v2.1.2 drops the body it is given (it parses it as properties), so the
// replier sets the body itself, as an application would once it noticed.
func TestRequestReply(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Rpc")
	// The broker finds the requester's connection among its registered producers. A Go producer
	// registers (heartbeat) only every 30 s, or in Request when the topic is not on the nameserver
	// yet; until then both brokers answer the reply "channel of <client> not found". Here the
	// requester shares its client instance with the consumer, whose start registers both at once.
	inst := nextInstance("rpc")
	requester := newProducer(t, group+"_Requester", producer.WithInstanceName(inst))
	replier := newProducer(t, group+"_Replier")

	// the topic exists before the consumer subscribes to it
	ctx, cancel := callCtx()
	res, err := requester.SendSync(ctx, primitive.NewMessage(topic, []byte("rpc-"+runID()+"-warm")).WithTag("Warm"))
	cancel()
	if !checkSendResult(t, 0, topic, res, err) {
		t.FailNow()
	}

	type replyErr struct {
		req string
		err error
	}
	replyErrs := make(chan replyErr, 16)
	handler := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			if m.GetTags() != "Req" {
				continue
			}
			reply, err := consumer.CreateReplyMessage(m, nil)
			if err != nil {
				replyErrs <- replyErr{string(m.Body), err}
				continue
			}
			reply.Body = []byte("reply to " + string(m.Body))
			reply.WithProperty("repliedBy", "go")
			ctx, cancel := callCtx()
			r, err := replier.SendSync(ctx, reply)
			cancel()
			if err == nil && r.Status != primitive.SendOK {
				err = fmt.Errorf("status %v", r.Status)
			}
			if err != nil {
				replyErrs <- replyErr{string(m.Body), err}
			}
		}
		return consumer.ConsumeSuccess, nil
	}
	startPushConsumer(t, topic, group, nil, pushOpts{model: consumer.Clustering, handler: handler, instance: inst})

	check := func(i int, body string, reply *primitive.Message, err error) {
		t.Helper()
		if err != nil {
			select {
			case re := <-replyErrs:
				t.Errorf("request %d: the replier failed for %q: %v", i, re.req, re.err)
			default:
			}
			t.Fatalf("request %d: %v", i, err)
		}
		if got, want := string(reply.Body), "reply to "+body; got != want {
			t.Errorf("request %d: reply body %q, want %q", i, got, want)
		}
		if reply.GetProperty("repliedBy") != "go" {
			t.Errorf("request %d: reply properties %v lack repliedBy=go", i, reply.GetProperties())
		}
		if !strings.HasSuffix(reply.Topic, "_REPLY_TOPIC") {
			t.Errorf("request %d: reply topic %q, want <cluster>_REPLY_TOPIC", i, reply.Topic)
		}
	}
	for i := 0; i < 2; i++ {
		body := fmt.Sprintf("rpc-%s-%d", runID(), i)
		started := time.Now()
		reply, err := requester.Request(context.Background(), 15*time.Second, primitive.NewMessage(topic, []byte(body)).WithTag("Req"))
		check(i, body, reply, err)
		t.Logf("request %d answered after %.0f ms", i, time.Since(started).Seconds()*1000)
	}

	body := fmt.Sprintf("rpc-%s-async", runID())
	type outcome struct {
		msg *primitive.Message
		err error
	}
	done := make(chan outcome, 1)
	err = requester.RequestAsync(context.Background(), 15*time.Second, func(_ context.Context, m *primitive.Message, err error) {
		done <- outcome{m, err}
	}, primitive.NewMessage(topic, []byte(body)).WithTag("Req"))
	if err != nil {
		t.Fatalf("RequestAsync: %v", err)
	}
	select {
	case o := <-done:
		check(2, body, o.msg, o.err)
	case <-time.After(20 * time.Second):
		t.Fatalf("RequestAsync: no callback within 20s")
	}
}
