// The scenarios of compat/README.md that franz-go runs one per call:
//
//	franz-compat BOOTSTRAP ID group|restart|txn|configs [PHASE]
//
// Admin calls (CreateTopics, DescribeConfigs, IncrementalAlterConfigs,
// OffsetFetch) are franz-go's typed requests of pkg/kmsg, issued through
// the client: franz-go's admin wrapper (pkg/kadm) is a module of its own,
// kmsg is what it is built on. franz-go commits offsets with its member id
// as the metadata and has no call to set it: the restart scenario checks
// that the metadata of phase 1's commit is phase 1's member id.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const deadline = 60 * time.Second

var runID string

func topicName(what string) string { return "c-franz-go-" + what + "-" + runID }

func createTopic(ctx context.Context, cl *kgo.Client, t string, parts int32) {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, parts, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Topics) == 1 {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		die("CreateTopics %s: %v", t, err)
	}
}

// produceSync sends the records in order and dies on the first error.
func produceSync(ctx context.Context, cl *kgo.Client, rs ...*kgo.Record) {
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		die("ProduceSync: %v", err)
	}
}

// groupMember is one consumer of the group scenario: the partitions it owns
// now (from the assign / revoke / lost callbacks) and every record it read.
type groupMember struct {
	mu    sync.Mutex
	owned map[int32]bool
	seen  map[string]string
	cl    *kgo.Client
	done  chan struct{}
}

func (m *groupMember) change(parts map[string][]int32, own bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range parts[topicName("group")] {
		if own {
			m.owned[p] = true
		} else {
			delete(m.owned, p)
		}
	}
}

func (m *groupMember) claims() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []int32
	for p := range m.owned {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

func startGroupMember(bs, t string) *groupMember {
	m := &groupMember{owned: map[int32]bool{}, seen: map[string]string{}, done: make(chan struct{})}
	m.cl = newClient(bs, kgo.ConsumerGroup(t), kgo.ConsumeTopics(t), kgo.DisableAutoCommit(),
		kgo.SessionTimeout(10*time.Second), kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, false) }))
	go func() {
		defer close(m.done)
		for {
			fs := m.cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				m.mu.Lock()
				m.seen[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = string(r.Value)
				m.mu.Unlock()
			})
		}
	}()
	return m
}

// waitSpread waits until every member owns partitions and together they own
// the 6 partitions once each.
func waitSpread(ms []*groupMember, what string) {
	end := time.Now().Add(deadline)
	var last [][]int32
	for time.Now().Before(end) {
		last = nil
		count, each := map[int32]int{}, true
		for _, m := range ms {
			c := m.claims()
			each = each && len(c) > 0
			for _, p := range c {
				count[p]++
			}
			last = append(last, c)
		}
		n := 0
		for _, k := range count {
			n += k
		}
		if each && len(count) == 6 && n == 6 {
			fmt.Printf("group: %s: %v\n", what, last)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	die("%s: the members never owned the 6 partitions once each: %v", what, last)
}

func scenarioGroup(ctx context.Context, bs string) {
	t := topicName("group")
	cl := newClient(bs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(ctx, cl, t, 6)
	var rs []*kgo.Record
	for i := 0; i < 60; i++ {
		rs = append(rs, &kgo.Record{Topic: t, Partition: int32(i % 6), Key: []byte(fmt.Sprintf("k%d", i)),
			Value: []byte(fmt.Sprintf("g-%d", i))})
	}
	produceSync(ctx, cl, rs...)
	cl.Close()
	ms := []*groupMember{startGroupMember(bs, t), startGroupMember(bs, t), startGroupMember(bs, t)}
	waitSpread(ms, "three members")
	left := ms[2]
	left.cl.Close() // leaves the group
	<-left.done
	ms = ms[:2]
	waitSpread(ms, "two members after one left")
	seen := map[string]string{}
	for end := time.Now().Add(deadline); len(seen) < 60 && time.Now().Before(end); {
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
			failf("partition/offset %s: %q, expected g-%d", at, seen[at], i)
		}
	}
	for _, m := range ms {
		m.cl.Close()
		<-m.done
	}
	fmt.Println("group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read")
}

// pollN reads n records of the group consumer cl, in order of arrival.
func pollN(ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollRecords(ctx, n-len(out))
		if ctx.Err() != nil {
			die("read %d of %d records", len(out), n)
		}
		fs.EachError(func(t string, p int32, err error) { fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

func scenarioRestart(ctx context.Context, bs, phase string) {
	t := topicName("restart")
	memberFile := filepath.Join(os.Getenv("COMPAT_WORK"), "restart.member")
	cl := newClient(bs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	first, last := 20, 25
	if phase == "before" {
		first, last = 0, 20
		createTopic(ctx, cl, t, 1)
	}
	for i := first; i < last; i++ {
		produceSync(ctx, cl, &kgo.Record{Topic: t, Partition: 0, Value: []byte(fmt.Sprintf("r-%d", i))})
	}
	if phase == "before" {
		restartCommit(ctx, bs, t, memberFile)
		return
	}
	restartResume(ctx, cl, bs, t, memberFile)
}

// restartCommit: a group member reads the first 10 records and commits 10.
func restartCommit(ctx context.Context, bs, t, memberFile string) {
	g := newClient(bs, kgo.ConsumerGroup(t), kgo.ConsumeTopics(t), kgo.DisableAutoCommit())
	defer g.Close()
	rs := pollN(ctx, g, 10)[:10]
	if rs[0].Offset != 0 || rs[9].Offset != 9 {
		failf("first records read at offsets %d..%d, expected 0..9", rs[0].Offset, rs[9].Offset)
	}
	var cerr error
	g.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{t: {0: {Epoch: rs[9].LeaderEpoch, Offset: 10}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			cerr = err
			for _, rt := range resp.Topics {
				for _, p := range rt.Partitions {
					if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
						cerr = e
					}
				}
			}
		})
	if cerr != nil {
		die("CommitOffsetsSync: %v", cerr)
	}
	member, _ := g.GroupMetadata()
	if err := os.WriteFile(memberFile, []byte(member), 0o644); err != nil {
		die("write %s: %v", memberFile, err)
	}
	fmt.Printf("restart: 10 of 20 records consumed, offset 10 committed by member %s\n", member)
}

// restartResume: after the broker restart the committed offset is 10 with
// phase 1's member id as metadata, and the group resumes at 10: 10..24.
func restartResume(ctx context.Context, cl *kgo.Client, bs, t, memberFile string) {
	member, err := os.ReadFile(memberFile)
	if err != nil {
		die("read %s: %v", memberFile, err)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = t
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = t, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		die("OffsetFetch: %v %+v", err, resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.Offset != 10 || p.Metadata == nil || *p.Metadata != string(member) || p.ErrorCode != 0 {
		failf("committed after the restart: offset %d metadata %v error %d, expected 10 %q",
			p.Offset, p.Metadata, p.ErrorCode, member)
	}
	g := newClient(bs, kgo.ConsumerGroup(t), kgo.ConsumeTopics(t), kgo.DisableAutoCommit())
	defer g.Close()
	rs := pollN(ctx, g, 15)
	for i, r := range rs {
		if r.Offset != int64(10+i) || string(r.Value) != fmt.Sprintf("r-%d", 10+i) {
			failf("after the restart record %d: %d:%s, expected %d:r-%d", i, r.Offset, r.Value, 10+i, 10+i)
		}
	}
	if len(rs) != 15 {
		failf("after the restart read %d records, expected 15", len(rs))
	}
	fmt.Println("restart: resumed at the committed offset 10, read 10..24")
}

func scenarioTxn(ctx context.Context, bs string) {
	t := topicName("txn")
	p := newClient(bs, kgo.TransactionalID(t), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(ctx, p, t, 1)
	for _, tx := range []struct {
		prefix string
		first  int
		commit kgo.TransactionEndTry
	}{{"t", 0, kgo.TryCommit}, {"a", 0, kgo.TryAbort}, {"t", 5, kgo.TryCommit}} {
		if err := p.BeginTransaction(); err != nil {
			die("BeginTransaction: %v", err)
		}
		for i := tx.first; i < tx.first+5; i++ {
			produceSync(ctx, p, &kgo.Record{Topic: t, Partition: 0, Value: []byte(fmt.Sprintf("%s-%d", tx.prefix, i))})
		}
		if err := p.EndTransaction(ctx, tx.commit); err != nil {
			die("EndTransaction(%v): %v", tx.commit, err)
		}
	}
	p.Close()
	c := newClient(bs, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(500*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t: {0: kgo.NewOffset().AtStart()}}))
	defer c.Close()
	var got []string
	for end := time.Now().Add(deadline); len(got) < 10 && time.Now().Before(end); {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		c.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		cancel()
	}
	// Anything after the 10th would be a record that should not be there.
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	c.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	cancel()
	if fmt.Sprint(got) != "[t-0 t-1 t-2 t-3 t-4 t-5 t-6 t-7 t-8 t-9]" {
		failf("read_committed read %v", got)
	}
	fmt.Println("txn: read_committed read the 10 committed records, not the aborted 5")
}

// describeRetention gives retention.ms of t and checks its source.
func describeRetention(ctx context.Context, cl *kgo.Client, t string, src kmsg.ConfigSource) string {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, t
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		die("DescribeConfigs %s: %v %+v", t, err, resp)
	}
	for _, c := range resp.Resources[0].Configs {
		if c.Name == "retention.ms" && c.Value != nil {
			if c.Source != src {
				failf("retention.ms=%s has source %v, expected %v", *c.Value, c.Source, src)
			}
			return *c.Value
		}
	}
	failf("retention.ms not described")
	return ""
}

func alterRetention(ctx context.Context, cl *kgo.Client, t string, op kmsg.IncrementalAlterConfigOp, v *string) {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, t
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = "retention.ms", op, v
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Resources) == 1 {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		die("IncrementalAlterConfigs %v: %v", op, err)
	}
}

func scenarioConfigs(ctx context.Context, bs string) {
	t := topicName("configs")
	cl := newClient(bs)
	defer cl.Close()
	createTopic(ctx, cl, t, 1)
	if v := describeRetention(ctx, cl, t, kmsg.ConfigSourceDefaultConfig); v != "604800000" {
		failf("retention.ms is %s, expected 604800000", v)
	}
	v := "123456789"
	alterRetention(ctx, cl, t, kmsg.IncrementalAlterConfigOpSet, &v)
	if got := describeRetention(ctx, cl, t, kmsg.ConfigSourceDynamicTopicConfig); got != v {
		failf("retention.ms after SET is %s, expected %s", got, v)
	}
	alterRetention(ctx, cl, t, kmsg.IncrementalAlterConfigOpDelete, nil)
	if got := describeRetention(ctx, cl, t, kmsg.ConfigSourceDefaultConfig); got != "604800000" {
		failf("retention.ms after DELETE is %s, expected 604800000", got)
	}
	fmt.Println("configs: retention.ms 604800000 (default), SET 123456789 (dynamic), DELETE back to default")
}

// runScenario runs one scenario; the exit status says whether it passed.
func runScenario(bs, id, scen, phase string) {
	runID = id
	ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
	defer cancel()
	switch scen {
	case "group":
		scenarioGroup(ctx, bs)
	case "restart":
		scenarioRestart(ctx, bs, phase)
	case "txn":
		scenarioTxn(ctx, bs)
	case "configs":
		scenarioConfigs(ctx, bs)
	default:
		die("unknown scenario %s", scen)
	}
	if errCount > 0 {
		die("%d mismatches", errCount)
	}
}
