// Command go-client drives the stock Go client (github.com/apache/rocketmq-client-go/v2, pinned in go.mod) for the
// fault scripts (compat/ha-faults.mjs, compat/dledger-faults.mjs, through compat/lib/go-client.mjs). One role per
// process, one JSON object per line on stdout, the client's own log (rlog) in a file or silenced; SIGTERM stops it.
//
//	go-client -role=producer -namesrv=ADDR -topic=T -group=G -prefix=P
//	    default producer settings except the nameserver; unique bodies P-<pid>-<n>, one send at a time;
//	    per send {"ok":true,"body","queueId","queueOffset","msgId","uniqId","brokerName","sentAt","at"}
//	    or {"ok":false,"body","status"|"error","sentAt","at"}
//	go-client -role=push -namesrv=ADDR -topic=T -group=G
//	    clustering push consumer from the first offset, subscribed to "*";
//	    per message {"body","queueId","queueOffset","brokerName","msgId","offsetMsgId","at"}
//
// Lines {"event":"started"} once the client runs and {"event":"stopped",...} after SIGTERM. Times are ms since the epoch.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// out writes whole JSON lines; goroutines of the push consumer call it concurrently.
var outMu sync.Mutex

func emit(v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"event":"error","error":%q}`, err.Error()))
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func nowMs() int64 { return time.Now().UnixNano() / int64(time.Millisecond) }

// shutdownWithin runs a client's Shutdown but gives up after `limit` (the client can block on a dead broker).
func shutdownWithin(limit time.Duration, fn func() error) string {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			return err.Error()
		}
		return ""
	case <-time.After(limit):
		return fmt.Sprintf("shutdown did not return within %s", limit)
	}
}

type options struct {
	role, namesrv, topic, group, prefix, instance string
	consumeDelay                                  time.Duration
}

func main() {
	var o options
	var logFile, logLevel string
	var delayMs int
	flag.StringVar(&o.role, "role", "", "producer | push")
	flag.StringVar(&o.namesrv, "namesrv", "", "nameserver address(es), ';' between several")
	flag.StringVar(&o.topic, "topic", "", "topic")
	flag.StringVar(&o.group, "group", "", "producer or consumer group")
	flag.StringVar(&o.prefix, "prefix", "go", "body prefix (producer)")
	flag.StringVar(&o.instance, "instance", "", "client instance name (default: role and pid)")
	flag.IntVar(&delayMs, "consume-delay-ms", 0, "time each message's handling takes (push)")
	flag.StringVar(&logFile, "log", "", "file for the client's own log (default: none)")
	flag.StringVar(&logLevel, "log-level", "warn", "rlog level when -log is given")
	flag.Parse()
	o.consumeDelay = time.Duration(delayMs) * time.Millisecond
	if o.namesrv == "" || o.topic == "" || o.group == "" || (o.role != "producer" && o.role != "push") {
		fmt.Fprintln(os.Stderr, "go-client: -role=producer|push, -namesrv, -topic and -group are required")
		os.Exit(2)
	}
	if o.instance == "" {
		o.instance = fmt.Sprintf("go_%s_%d", o.role, os.Getpid())
	}
	// rlog writes to stderr at info level unless told otherwise; keep stdout for the JSON lines only.
	if logFile != "" {
		rlog.SetLogLevel(logLevel)
		if err := rlog.SetOutputPath(logFile); err != nil {
			fmt.Fprintln(os.Stderr, "go-client: log file:", err)
		}
	} else {
		rlog.SetLogLevel("fatal")
	}
	ns, err := primitive.NewNamesrvAddr(strings.Split(o.namesrv, ";")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-client: bad -namesrv:", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	if o.role == "producer" {
		os.Exit(runProducer(o, ns, stop))
	}
	os.Exit(runPush(o, ns, stop))
}

func runProducer(o options, ns primitive.NamesrvAddr, stop chan os.Signal) int {
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(ns),
		producer.WithGroupName(o.group),
		producer.WithInstanceName(o.instance),
	)
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		emit(map[string]interface{}{"event": "failed", "error": err.Error()})
		return 1
	}
	emit(map[string]interface{}{"event": "started", "at": nowMs()})
	stopping := false
	tried := 0
	for !stopping {
		body := fmt.Sprintf("%s-%d-%d", o.prefix, os.Getpid(), tried)
		tried++
		sentAt := nowMs()
		res, err := p.SendSync(context.Background(), primitive.NewMessage(o.topic, []byte(body)).WithTag("TagF"))
		at := nowMs()
		switch {
		case err != nil:
			emit(map[string]interface{}{"ok": false, "body": body, "error": err.Error(), "sentAt": sentAt, "at": at})
		case res.Status != primitive.SendOK:
			emit(map[string]interface{}{"ok": false, "body": body, "status": int(res.Status), "sentAt": sentAt, "at": at})
		default:
			emit(map[string]interface{}{
				"ok": true, "body": body, "queueId": res.MessageQueue.QueueId, "queueOffset": res.QueueOffset,
				"msgId": res.OffsetMsgID, "uniqId": res.MsgID, "brokerName": res.MessageQueue.BrokerName,
				"sentAt": sentAt, "at": at,
			})
		}
		if err != nil {
			// no route at all answers at once: do not spin
			select {
			case <-stop:
				stopping = true
			case <-time.After(50 * time.Millisecond):
			}
		}
		select {
		case <-stop:
			stopping = true
		default:
		}
	}
	problem := shutdownWithin(15*time.Second, p.Shutdown)
	emit(map[string]interface{}{"event": "stopped", "tried": tried, "shutdownError": problem, "at": nowMs()})
	return 0
}

func runPush(o options, ns primitive.NamesrvAddr, stop chan os.Signal) int {
	handler := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			emit(map[string]interface{}{
				"body": string(m.Body), "queueId": m.Queue.QueueId, "queueOffset": m.QueueOffset,
				"brokerName": m.Queue.BrokerName, "msgId": m.MsgId, "offsetMsgId": m.OffsetMsgId, "at": nowMs(),
			})
			if o.consumeDelay > 0 {
				time.Sleep(o.consumeDelay)
			}
		}
		return consumer.ConsumeSuccess, nil
	}
	// Start fails while the topic has no route yet; a consumer that failed to start cannot be started again.
	for attempt := 0; ; attempt++ {
		c, err := rocketmq.NewPushConsumer(
			consumer.WithNameServer(ns),
			consumer.WithGroupName(o.group),
			consumer.WithInstance(o.instance),
			consumer.WithConsumerModel(consumer.Clustering),
			consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		)
		if err == nil {
			err = c.Subscribe(o.topic, consumer.MessageSelector{}, handler)
		}
		if err == nil {
			err = c.Start()
		}
		if err == nil {
			emit(map[string]interface{}{"event": "started", "attempts": attempt + 1, "at": nowMs()})
			<-stop
			problem := shutdownWithin(15*time.Second, c.Shutdown)
			emit(map[string]interface{}{"event": "stopped", "shutdownError": problem, "at": nowMs()})
			return 0
		}
		if c != nil {
			shutdownWithin(5*time.Second, c.Shutdown)
		}
		if !strings.Contains(err.Error(), "route info not found") || attempt >= 60 {
			emit(map[string]interface{}{"event": "failed", "error": err.Error()})
			return 1
		}
		select {
		case <-stop:
			emit(map[string]interface{}{"event": "stopped", "at": nowMs()})
			return 0
		case <-time.After(500 * time.Millisecond):
		}
	}
}
