// IBM sarama (Go) in the compatibility suite: one scenario of
// compat/README.md per run, called by compat/clients/sarama.sh as
//
//	sarama-compat BOOTSTRAP ID SCENARIO [PHASE]
//
// sarama speaks the protocol versions of the Kafka version it is configured
// for: sarama.MaxVersion, the newest it knows. Exit status 0 when everything
// read back is what the scenario expects, 1 with the first differences on
// stderr.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

const (
	nProduce = 50
	deadline = 60 * time.Second
)

var (
	bs, id   string
	errCount int
	codecs   = []struct {
		name  string
		codec sarama.CompressionCodec
	}{{"none", sarama.CompressionNone}, {"gzip", sarama.CompressionGZIP},
		{"snappy", sarama.CompressionSnappy}, {"lz4", sarama.CompressionLZ4}, {"zstd", sarama.CompressionZSTD}}
)

func mismatch(format string, args ...any) {
	errCount++
	if errCount <= 20 {
		fmt.Fprintf(os.Stderr, "MISMATCH: "+format+"\n", args...)
	}
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		die("%s: %v", what, err)
	}
}

func topic(what string) string { return "c-sarama-" + what + "-" + id }

// The data of compat/README.md.
func key(i int) []byte {
	switch {
	case i%10 == 0:
		return nil
	case i == 7:
		return []byte{0, 0xff, 1, 0xfe, 0}
	}
	return []byte(fmt.Sprintf("key-%d", i))
}

func value(i int) []byte {
	if i == 5 {
		return []byte{}
	}
	v := []byte(fmt.Sprintf("value-%d ü✓|", i))
	for j := 0; j < i%40; j++ {
		v = append(v, byte(i*31+j))
	}
	return v
}

func headers(i int) []sarama.RecordHeader {
	switch i % 3 {
	case 1:
		return []sarama.RecordHeader{{Key: []byte("h"), Value: []byte(fmt.Sprintf("v%d", i))}}
	case 2:
		return []sarama.RecordHeader{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("2")},
			{Key: []byte("empty"), Value: []byte{}}}
	}
	return nil
}

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = sarama.MaxVersion
	c.ClientID = "strand-compat-sarama"
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.Metadata.Retry.Backoff = 200 * time.Millisecond
	// Right after a restart Kafka answers NOT_LEADER for a while: retry for
	// up to 10 s as the other clients do.
	c.Producer.Retry.Max = 40
	c.Producer.Retry.Backoff = 250 * time.Millisecond
	return c
}

func admin() sarama.ClusterAdmin {
	a, err := sarama.NewClusterAdmin([]string{bs}, config())
	check(err, "NewClusterAdmin")
	return a
}

func create(a sarama.ClusterAdmin, t string, parts int32) {
	check(a.CreateTopic(t, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: 1}, false), "CreateTopic "+t)
}

// sendAll produces the messages in order with a sync producer and returns
// the offsets the broker acknowledged.
func sendAll(cfg *sarama.Config, msgs []*sarama.ProducerMessage) []int64 {
	p, err := sarama.NewSyncProducer([]string{bs}, cfg)
	check(err, "NewSyncProducer")
	defer p.Close()
	check(p.SendMessages(msgs), "SendMessages")
	offs := make([]int64, len(msgs))
	for i, m := range msgs {
		offs[i] = m.Offset
	}
	return offs
}

// readAll reads partition 0 of t from the start until n messages came.
func readAll(t string, n int) []*sarama.ConsumerMessage {
	c, err := sarama.NewConsumer([]string{bs}, config())
	check(err, "NewConsumer")
	defer c.Close()
	pc, err := c.ConsumePartition(t, 0, sarama.OffsetOldest)
	check(err, "ConsumePartition "+t)
	defer pc.Close()
	var out []*sarama.ConsumerMessage
	timeout := time.After(deadline)
	for len(out) < n {
		select {
		case m := <-pc.Messages():
			out = append(out, m)
		case e := <-pc.Errors():
			die("consume %s: %v", t, e)
		case <-timeout:
			mismatch("%s: read %d messages, expected %d", t, len(out), n)
			return out
		}
	}
	return out
}

func metadata() {
	t := topic("meta")
	a := admin()
	defer a.Close()
	brokers, _, err := a.DescribeCluster()
	check(err, "DescribeCluster")
	if len(brokers) != 1 || brokers[0].Addr() != bs {
		mismatch("brokers %v, expected one at %s", brokers, bs)
	}
	create(a, t, 3)
	err = a.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false)
	if !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		mismatch("second create of %s: %v, expected ErrTopicAlreadyExists", t, err)
	}
	md, err := a.DescribeTopics([]string{t})
	check(err, "DescribeTopics")
	if len(md) != 1 || md[0].Err != sarama.ErrNoError || len(md[0].Partitions) != 3 {
		die("DescribeTopics %s: %+v", t, md)
	}
	sort.Slice(md[0].Partitions, func(i, j int) bool { return md[0].Partitions[i].ID < md[0].Partitions[j].ID })
	for i, p := range md[0].Partitions {
		if p.ID != int32(i) || p.Leader != brokers[0].ID() || p.Err != sarama.ErrNoError {
			mismatch("partition %d: %+v", i, p)
		}
	}
	fmt.Printf("metadata: broker at %s, %s created with 3 partitions led by it\n", bs, t)
}

func produce() {
	base := time.UnixMilli(time.Now().Unix()*1000 - 3600_000)
	a := admin()
	for _, c := range codecs {
		create(a, topic("p-"+c.name), 1)
	}
	a.Close()
	for _, c := range codecs {
		t := topic("p-" + c.name)
		cfg := config()
		cfg.Producer.Compression = c.codec
		msgs := make([]*sarama.ProducerMessage, nProduce)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{Topic: t, Partition: 0, Headers: headers(i),
				Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
			if k := key(i); k != nil {
				msgs[i].Key = sarama.ByteEncoder(k)
			}
			msgs[i].Value = sarama.ByteEncoder(value(i))
		}
		for i, off := range sendAll(cfg, msgs) {
			if off != int64(i) {
				mismatch("%s: record %d acknowledged at offset %d", c.name, i, off)
			}
		}
		got := readAll(t, nProduce)
		for i, m := range got {
			checkRecord(c.name, i, m, base.Add(time.Duration(i)*time.Millisecond))
		}
		fmt.Printf("produce %s: %d records read back exactly\n", c.name, len(got))
	}
}

func checkRecord(what string, i int, m *sarama.ConsumerMessage, ts time.Time) {
	if m.Offset != int64(i) {
		mismatch("%s: record %d at offset %d", what, i, m.Offset)
	}
	if !bytes.Equal(m.Key, key(i)) || (m.Key == nil) != (key(i) == nil) {
		mismatch("%s: offset %d key %q, expected %q", what, m.Offset, m.Key, key(i))
	}
	if !bytes.Equal(m.Value, value(i)) {
		mismatch("%s: offset %d value %q", what, m.Offset, m.Value)
	}
	if !m.Timestamp.Equal(ts) {
		mismatch("%s: offset %d timestamp %v, expected %v", what, m.Offset, m.Timestamp, ts)
	}
	want := headers(i)
	same := len(m.Headers) == len(want)
	for j := 0; same && j < len(want); j++ {
		same = bytes.Equal(m.Headers[j].Key, want[j].Key) && bytes.Equal(m.Headers[j].Value, want[j].Value)
	}
	if !same {
		mismatch("%s: offset %d headers %v", what, m.Offset, m.Headers)
	}
}

func byTime() {
	t := topic("time")
	base := time.Now().Unix()*1000 - 60_000
	a := admin()
	create(a, t, 1)
	a.Close()
	msgs := make([]*sarama.ProducerMessage, 10)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: t, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("t-%d", i)),
			Timestamp: time.UnixMilli(base + int64(i)*1000)}
	}
	sendAll(config(), msgs)
	cl, err := sarama.NewClient([]string{bs}, config())
	check(err, "NewClient")
	defer cl.Close()
	for _, c := range [][2]int64{{base, 0}, {base + 3500, 4}, {base + 9000, 9}, {base + 9001, -1},
		{sarama.OffsetOldest, 0}, {sarama.OffsetNewest, 10}} {
		off, err := cl.GetOffset(t, 0, c[0])
		if err != nil || off != c[1] {
			mismatch("GetOffset(%d): %d %v, expected %d", c[0], off, err, c[1])
		}
	}
	fmt.Println("by-time: offsets 0, 4, 9, none for the 4 timestamps; earliest 0, latest 10")
}

// member is one consumer of the group scenario; its handler records the
// claims of the current session and every message.
type member struct {
	mu     sync.Mutex
	claims []int32
	seen   map[string]string
	cancel context.CancelFunc
	done   chan struct{}
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	m.claims = append([]int32(nil), s.Claims()[topic("group")]...)
	m.mu.Unlock()
	return nil
}

func (m *member) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	m.claims = nil
	m.mu.Unlock()
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		m.mu.Lock()
		m.seen[fmt.Sprintf("%d/%d", msg.Partition, msg.Offset)] = string(msg.Value)
		m.mu.Unlock()
	}
	return nil
}

func startMember(t string) *member {
	cfg := config()
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{bs}, t, cfg)
	check(err, "NewConsumerGroup")
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{seen: map[string]string{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{t}, m); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "Consume: %v\n", err)
				time.Sleep(100 * time.Millisecond)
			}
		}
		g.Close()
		close(m.done)
	}()
	return m
}

func waitSpread(ms []*member, what string) {
	end := time.Now().Add(deadline)
	var last [][]int32
	for time.Now().Before(end) {
		last = nil
		all := map[int32]int{}
		each := true
		for _, m := range ms {
			m.mu.Lock()
			c := append([]int32(nil), m.claims...)
			m.mu.Unlock()
			each = each && len(c) > 0
			for _, p := range c {
				all[p]++
			}
			last = append(last, c)
		}
		n := 0
		for _, k := range all {
			n += k
		}
		if each && len(all) == 6 && n == 6 {
			fmt.Printf("group: %s: %v\n", what, last)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	die("%s: claims never covered the 6 partitions once each: %v", what, last)
}

func group() {
	t := topic("group")
	a := admin()
	create(a, t, 6)
	a.Close()
	msgs := make([]*sarama.ProducerMessage, 60)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: t, Partition: int32(i % 6), Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.StringEncoder(fmt.Sprintf("g-%d", i))}
	}
	sendAll(config(), msgs)
	ms := []*member{startMember(t), startMember(t), startMember(t)}
	waitSpread(ms, "three members")
	ms[2].cancel()
	<-ms[2].done
	left := ms[2]
	ms = ms[:2]
	waitSpread(ms, "two members after one left")
	seen := map[string]string{}
	end := time.Now().Add(deadline)
	for len(seen) < 60 && time.Now().Before(end) {
		for _, m := range append(ms, left) {
			m.mu.Lock()
			for k, v := range m.seen {
				seen[k] = v
			}
			m.mu.Unlock()
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 60; i++ {
		at := fmt.Sprintf("%d/%d", i%6, i/6)
		if seen[at] != fmt.Sprintf("g-%d", i) {
			mismatch("partition/offset %s: %q, expected g-%d", at, seen[at], i)
		}
	}
	for _, m := range ms {
		m.cancel()
		<-m.done
	}
	fmt.Println("group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read")
}

// once is a consumer group handler that reads partition 0 from the
// session's offset: the first n messages, marked and committed.
type once struct {
	n     int
	first int64
	got   []string
	meta  string
	ready chan struct{}
}

func (o *once) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (o *once) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (o *once) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		if len(o.got) == 0 {
			o.first = msg.Offset
		}
		o.got = append(o.got, fmt.Sprintf("%d:%s", msg.Offset, msg.Value))
		if len(o.got) == o.n {
			if o.meta != "" {
				s.MarkOffset(msg.Topic, msg.Partition, msg.Offset+1, o.meta)
				s.Commit()
			}
			close(o.ready)
			return nil
		}
	}
	return nil
}

func consumeOnce(t string, n int, meta string) *once {
	g, err := sarama.NewConsumerGroup([]string{bs}, t, config())
	check(err, "NewConsumerGroup")
	defer g.Close()
	o := &once{n: n, meta: meta, ready: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{t}, o); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "Consume: %v\n", err)
			}
		}
	}()
	select {
	case <-o.ready:
	case <-ctx.Done():
		die("read %d of %d records of %s", len(o.got), n, t)
	}
	return o
}

func restart(phase string) {
	t := topic("restart")
	var msgs []*sarama.ProducerMessage
	first, last := 0, 20
	if phase != "before" {
		first, last = 20, 25
	} else {
		a := admin()
		create(a, t, 1)
		a.Close()
	}
	for i := first; i < last; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: t, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("r-%d", i))})
	}
	sendAll(config(), msgs)
	if phase == "before" {
		o := consumeOnce(t, 10, "sarama-"+id)
		if o.first != 0 {
			mismatch("first record read at offset %d", o.first)
		}
		fmt.Println("restart: 10 of 20 records consumed, offset 10 committed")
		return
	}
	a := admin()
	r, err := a.ListConsumerGroupOffsets(t, map[string][]int32{t: {0}})
	check(err, "ListConsumerGroupOffsets")
	a.Close()
	if b := r.GetBlock(t, 0); b == nil || b.Offset != 10 || b.Metadata != "sarama-"+id {
		mismatch("committed after the restart: %+v", b)
	}
	o := consumeOnce(t, 15, "")
	for i, s := range o.got {
		if want := fmt.Sprintf("%d:r-%d", 10+i, 10+i); s != want {
			mismatch("after the restart record %d: %s, expected %s", i, s, want)
		}
	}
	fmt.Println("restart: resumed at the committed offset 10, read 10..24")
}

func idempotent() {
	t := topic("idem")
	a := admin()
	create(a, t, 1)
	a.Close()
	cfg := config()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Flush.Bytes = 2048
	msgs := make([]*sarama.ProducerMessage, 1000)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: t, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("i-%d", i))}
	}
	sendAll(cfg, msgs)
	for i, m := range readAll(t, 1000) {
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("i-%d", i) {
			mismatch("offset %d: %q, expected i-%d", m.Offset, m.Value, i)
		}
	}
	fmt.Println("idempotent: 1000 records once each, in order")
}

func txn() {
	t := topic("txn")
	a := admin()
	create(a, t, 1)
	a.Close()
	cfg := config()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = t
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{bs}, cfg)
	check(err, "NewSyncProducer (transactional)")
	for _, tx := range []struct {
		prefix string
		first  int
		commit bool
	}{{"t", 0, true}, {"a", 0, false}, {"t", 5, true}} {
		check(p.BeginTxn(), "BeginTxn")
		for i := tx.first; i < tx.first+5; i++ {
			_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: t, Partition: 0,
				Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", tx.prefix, i))})
			check(err, "SendMessage")
		}
		if tx.commit {
			check(p.CommitTxn(), "CommitTxn")
		} else {
			check(p.AbortTxn(), "AbortTxn")
		}
	}
	p.Close()
	cfg = config()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	c, err := sarama.NewConsumer([]string{bs}, cfg)
	check(err, "NewConsumer")
	defer c.Close()
	pc, err := c.ConsumePartition(t, 0, sarama.OffsetOldest)
	check(err, "ConsumePartition")
	var got []string
	timeout := time.After(deadline)
	for len(got) < 10 {
		select {
		case m := <-pc.Messages():
			got = append(got, string(m.Value))
		case <-timeout:
			die("read_committed read %v", got)
		}
	}
	select {
	case m := <-pc.Messages():
		got = append(got, string(m.Value))
	case <-time.After(500 * time.Millisecond):
	}
	pc.Close()
	if fmt.Sprint(got) != "[t-0 t-1 t-2 t-3 t-4 t-5 t-6 t-7 t-8 t-9]" {
		mismatch("read_committed read %v", got)
	}
	fmt.Println("txn: read_committed read the 10 committed records, not the aborted 5")
}

func describe(a sarama.ClusterAdmin, t, key string, src sarama.ConfigSource) string {
	es, err := a.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: t})
	check(err, "DescribeConfig")
	for _, e := range es {
		if e.Name == key {
			if e.Source != src {
				mismatch("%s=%s has source %v, expected %v", key, e.Value, e.Source, src)
			}
			return e.Value
		}
	}
	mismatch("%s not described", key)
	return ""
}

func configs() {
	t := topic("configs")
	a := admin()
	defer a.Close()
	create(a, t, 1)
	if v := describe(a, t, "retention.ms", sarama.SourceDefault); v != "604800000" {
		mismatch("retention.ms is %s, expected 604800000", v)
	}
	v := "123456789"
	check(a.IncrementalAlterConfig(sarama.TopicResource, t, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}}, false), "IncrementalAlterConfig SET")
	if got := describe(a, t, "retention.ms", sarama.SourceTopic); got != v {
		mismatch("retention.ms after SET is %s, expected %s", got, v)
	}
	check(a.IncrementalAlterConfig(sarama.TopicResource, t, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationDelete}}, false), "IncrementalAlterConfig DELETE")
	if got := describe(a, t, "retention.ms", sarama.SourceDefault); got != "604800000" {
		mismatch("retention.ms after DELETE is %s, expected 604800000", got)
	}
	fmt.Println("configs: retention.ms 604800000 (default), SET 123456789 (dynamic), DELETE back to default")
}

func main() {
	if len(os.Args) < 4 {
		die("usage: sarama-compat BOOTSTRAP ID SCENARIO [PHASE]")
	}
	bs, id = os.Args[1], os.Args[2]
	phase := ""
	if len(os.Args) > 4 {
		phase = os.Args[4]
	}
	switch os.Args[3] {
	case "metadata":
		metadata()
	case "produce":
		produce()
	case "by-time":
		byTime()
	case "group":
		group()
	case "restart":
		restart(phase)
	case "idempotent":
		idempotent()
	case "txn":
		txn()
	case "configs":
		configs()
	default:
		die("unknown scenario %s", os.Args[3])
	}
	if errCount > 0 {
		die("%d mismatches", errCount)
	}
}
