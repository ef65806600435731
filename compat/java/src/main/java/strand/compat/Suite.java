package strand.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client (kafka-clients 4.4.0) in the compatibility suite: one
 * scenario of compat/README.md per run, called by compat/clients/java.sh as
 *
 *   Suite BOOTSTRAP ID SCENARIO [PHASE]
 *
 * Exit status 0 when everything read back is what the scenario expects, 1
 * with the first differences on stderr.
 */
public final class Suite {
    private static final int N_PRODUCE = 50;
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    private static final Duration POLL = Duration.ofMillis(200);
    private static final long DEADLINE_MS = 60_000;

    private final String bs;
    private final String id;
    private int errors;

    private Suite(String bs, String id) {
        this.bs = bs;
        this.id = id;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: Suite BOOTSTRAP ID SCENARIO [PHASE]");
            System.exit(2);
        }
        Suite s = new Suite(args[0], args[1]);
        String phase = args.length > 3 ? args[3] : "";
        switch (args[2]) {
            case "metadata" -> s.metadata();
            case "produce" -> s.produce();
            case "by-time" -> s.byTime();
            case "group" -> s.group();
            case "restart" -> s.restart(phase);
            case "idempotent" -> s.idempotent();
            case "txn" -> s.txn();
            case "configs" -> s.configs();
            default -> s.die("unknown scenario " + args[2]);
        }
        if (s.errors > 0) {
            s.die(s.errors + " mismatches");
        }
        System.exit(0);
    }

    private void die(String msg) {
        System.err.println("FAIL: " + msg);
        System.exit(1);
    }

    private void mismatch(String msg) {
        if (++errors <= 20) {
            System.err.println("MISMATCH: " + msg);
        }
    }

    private String topic(String what) {
        return "c-java-" + what + "-" + id;
    }

    /* ---- the data of compat/README.md ---- */

    static byte[] key(int i) {
        if (i % 10 == 0) {
            return null;
        }
        if (i == 7) {
            return new byte[] {0, (byte) 0xff, 1, (byte) 0xfe, 0};
        }
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(int i) {
        if (i == 5) {
            return new byte[0];
        }
        byte[] head = ("value-" + i + " ü✓|").getBytes(StandardCharsets.UTF_8);
        byte[] v = Arrays.copyOf(head, head.length + i % 40);
        for (int j = 0; j < i % 40; j++) {
            v[head.length + j] = (byte) (i * 31 + j);
        }
        return v;
    }

    static List<Header> headers(int i) {
        List<Header> hs = new ArrayList<>();
        if (i % 3 == 1) {
            hs.add(new RecordHeader("h", ("v" + i).getBytes(StandardCharsets.UTF_8)));
        } else if (i % 3 == 2) {
            hs.add(new RecordHeader("a", "1".getBytes(StandardCharsets.UTF_8)));
            hs.add(new RecordHeader("a", "2".getBytes(StandardCharsets.UTF_8)));
            hs.add(new RecordHeader("empty", new byte[0]));
        }
        return hs;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? "<null>" : new String(b, StandardCharsets.UTF_8);
    }

    /* ---- clients ---- */

    private Properties common() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bs);
        p.put("client.id", "strand-compat-java");
        return p;
    }

    private Admin admin() {
        return Admin.create(common());
    }

    private KafkaProducer<byte[], byte[]> producer(String... kv) {
        Properties p = common();
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("linger.ms", "5");
        for (int i = 0; i + 1 < kv.length; i += 2) {
            p.put(kv[i], kv[i + 1]);
        }
        return new KafkaProducer<>(p);
    }

    private KafkaConsumer<byte[], byte[]> consumer(String... kv) {
        Properties p = common();
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("group.protocol", "classic");
        for (int i = 0; i + 1 < kv.length; i += 2) {
            p.put(kv[i], kv[i + 1]);
        }
        return new KafkaConsumer<>(p);
    }

    private void createTopic(Admin admin, String name, int parts) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, parts, (short) 1))).all().get();
    }

    /* Reads partition 0 of the topic from the start until n records came. */
    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int n, String... kv) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(kv)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = System.currentTimeMillis() + DEADLINE_MS;
            while (out.size() < n && System.currentTimeMillis() < end) {
                c.poll(POLL).forEach(out::add);
            }
        }
        if (out.size() != n) {
            mismatch(topic + ": read " + out.size() + " records, expected " + n);
        }
        return out;
    }

    /* ---- scenarios ---- */

    private void metadata() throws Exception {
        String t = topic("meta");
        try (Admin admin = admin()) {
            Collection<Node> nodes = admin.describeCluster().nodes().get();
            if (nodes.size() != 1 || !(nodes.iterator().next().host() + ":" + nodes.iterator().next().port()).equals(bs)) {
                mismatch("brokers " + nodes + ", expected one at " + bs);
            }
            int nodeId = nodes.iterator().next().id();
            createTopic(admin, t, 3);
            try {
                createTopic(admin, t, 3);
                mismatch("a second create of " + t + " succeeded");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    mismatch("second create: " + e.getCause() + ", expected TopicExistsException");
                }
            }
            TopicDescription d = admin.describeTopics(List.of(t)).allTopicNames().get().get(t);
            List<TopicPartitionInfo> ps = d.partitions();
            for (int i = 0; i < ps.size(); i++) {
                if (ps.get(i).partition() != i || ps.get(i).leader() == null || ps.get(i).leader().id() != nodeId) {
                    mismatch("partition " + i + ": " + ps.get(i));
                }
            }
            if (ps.size() != 3) {
                mismatch(t + " has " + ps.size() + " partitions, expected 3");
            }
            if (!admin.listTopics().names().get().contains(t)) {
                mismatch(t + " not listed");
            }
        }
        System.out.println("metadata: broker at " + bs + ", " + t + " created with 3 partitions led by it");
    }

    private void produce() throws Exception {
        long base = System.currentTimeMillis() / 1000 * 1000 - 3_600_000;
        try (Admin admin = admin()) {
            for (String codec : CODECS) {
                createTopic(admin, topic("p-" + codec), 1);
            }
        }
        for (String codec : CODECS) {
            String t = topic("p-" + codec);
            try (KafkaProducer<byte[], byte[]> p = producer("compression.type", codec)) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < N_PRODUCE; i++) {
                    fs.add(p.send(new ProducerRecord<>(t, 0, base + i, key(i), value(i), headers(i))));
                }
                for (int i = 0; i < N_PRODUCE; i++) {
                    long off = fs.get(i).get().offset();
                    if (off != i) {
                        mismatch(codec + ": record " + i + " acknowledged at offset " + off);
                    }
                }
            }
            List<ConsumerRecord<byte[], byte[]>> got = readAll(t, N_PRODUCE);
            for (int i = 0; i < got.size(); i++) {
                checkRecord(codec, got.get(i), i, base + i);
            }
            System.out.println("produce " + codec + ": " + got.size() + " records read back exactly");
        }
    }

    private void checkRecord(String what, ConsumerRecord<byte[], byte[]> r, int i, long ts) {
        if (r.offset() != i) {
            mismatch(what + ": record " + i + " at offset " + r.offset());
        }
        if (!Arrays.equals(r.key(), key(i))) {
            mismatch(what + ": offset " + r.offset() + " key " + str(r.key()));
        }
        if (!Arrays.equals(r.value(), value(i))) {
            mismatch(what + ": offset " + r.offset() + " value " + str(r.value()));
        }
        if (r.timestamp() != ts) {
            mismatch(what + ": offset " + r.offset() + " timestamp " + r.timestamp() + ", expected " + ts);
        }
        List<Header> want = headers(i);
        Header[] hs = r.headers().toArray();
        boolean same = hs.length == want.size();
        for (int j = 0; same && j < hs.length; j++) {
            same = hs[j].key().equals(want.get(j).key()) && Arrays.equals(hs[j].value(), want.get(j).value());
        }
        if (!same) {
            mismatch(what + ": offset " + r.offset() + " headers " + Arrays.toString(hs));
        }
    }

    private void byTime() throws Exception {
        String t = topic("time");
        long base = System.currentTimeMillis() / 1000 * 1000 - 60_000;
        try (Admin admin = admin()) {
            createTopic(admin, t, 1);
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                for (int i = 0; i < 10; i++) {
                    p.send(new ProducerRecord<>(t, 0, base + i * 1000L, null, utf8("t-" + i))).get();
                }
            }
            TopicPartition tp = new TopicPartition(t, 0);
            long[][] cases = {{base, 0}, {base + 3500, 4}, {base + 9000, 9}, {base + 9001, -1}};
            for (long[] c : cases) {
                var r = admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(c[0]))).all().get().get(tp);
                if (r.offset() != c[1]) {
                    mismatch("offset for timestamp base+" + (c[0] - base) + ": " + r.offset() + ", expected " + c[1]);
                }
            }
            long earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
            long latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
            if (earliest != 0 || latest != 10) {
                mismatch("earliest " + earliest + ", latest " + latest + ", expected 0 and 10");
            }
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            TopicPartition tp = new TopicPartition(t, 0);
            Map<TopicPartition, OffsetAndTimestamp> m = c.offsetsForTimes(Map.of(tp, base + 3500));
            if (m.get(tp) == null || m.get(tp).offset() != 4 || m.get(tp).timestamp() != base + 4000) {
                mismatch("consumer offsetsForTimes: " + m.get(tp));
            }
        }
        System.out.println("by-time: offsets 0, 4, 9, none for the 4 timestamps; earliest 0, latest 10");
    }

    private void group() throws Exception {
        String t = topic("group");
        String g = t;
        try (Admin admin = admin()) {
            createTopic(admin, t, 6);
        }
        try (KafkaProducer<byte[], byte[]> p = producer()) {
            for (int i = 0; i < 60; i++) {
                p.send(new ProducerRecord<>(t, i % 6, utf8("k" + i), utf8("g-" + i)));
            }
        }
        List<KafkaConsumer<byte[], byte[]>> cs = new ArrayList<>();
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 3; i++) {
            KafkaConsumer<byte[], byte[]> c = consumer("group.id", g, "session.timeout.ms", "10000",
                "heartbeat.interval.ms", "500", "client.id", "strand-compat-java-" + i);
            c.subscribe(List.of(t));
            cs.add(c);
        }
        waitSpread(cs, seen, "three members");
        cs.get(2).close();
        cs.remove(2);
        waitSpread(cs, seen, "two members after one left");
        long end = System.currentTimeMillis() + DEADLINE_MS;
        while (seen.size() < 60 && System.currentTimeMillis() < end) {
            pollAll(cs, seen);
        }
        for (int i = 0; i < 60; i++) {
            String at = (i % 6) + "/" + (i / 6);
            if (!("g-" + i).equals(seen.get(at))) {
                mismatch("partition/offset " + at + ": " + seen.get(at) + ", expected g-" + i);
            }
        }
        for (KafkaConsumer<byte[], byte[]> c : cs) {
            c.close();
        }
        System.out.println("group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read");
    }

    private void pollAll(List<KafkaConsumer<byte[], byte[]>> cs, Map<String, String> seen) {
        for (KafkaConsumer<byte[], byte[]> c : cs) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(50))) {
                seen.put(r.partition() + "/" + r.offset(), str(r.value()));
            }
        }
    }

    /* Polls every member until each owns partitions and together they own
     * all 6, each once. */
    private void waitSpread(List<KafkaConsumer<byte[], byte[]>> cs, Map<String, String> seen, String what) {
        long end = System.currentTimeMillis() + DEADLINE_MS;
        String last = "";
        while (System.currentTimeMillis() < end) {
            pollAll(cs, seen);
            Set<Integer> all = new HashSet<>();
            int total = 0;
            boolean each = true;
            List<String> as = new ArrayList<>();
            for (KafkaConsumer<byte[], byte[]> c : cs) {
                Set<TopicPartition> a = c.assignment();
                each &= !a.isEmpty();
                total += a.size();
                a.forEach(tp -> all.add(tp.partition()));
                as.add(a.toString());
            }
            last = as.toString();
            if (each && total == 6 && all.size() == 6) {
                System.out.println("group: " + what + ": " + last);
                return;
            }
        }
        mismatch(what + ": assignments never covered the 6 partitions once each: " + last);
        die("group did not settle");
    }

    private void restart(String phase) throws Exception {
        String t = topic("restart");
        TopicPartition tp = new TopicPartition(t, 0);
        if (phase.equals("before")) {
            try (Admin admin = admin()) {
                createTopic(admin, t, 1);
            }
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                for (int i = 0; i < 20; i++) {
                    p.send(new ProducerRecord<>(t, 0, null, utf8("r-" + i)));
                }
            }
            int n = 0;
            try (KafkaConsumer<byte[], byte[]> c = consumer("group.id", t)) {
                c.subscribe(List.of(t));
                long end = System.currentTimeMillis() + DEADLINE_MS;
                while (n < 10 && System.currentTimeMillis() < end) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
                        if (n < 10 && r.offset() == n && str(r.value()).equals("r-" + n)) {
                            n++;
                        }
                    }
                }
                c.commitSync(Map.of(tp, new OffsetAndMetadata(10, "java-" + id)));
            }
            if (n != 10) {
                mismatch("read " + n + " of the first 10 records");
            }
            System.out.println("restart: 10 of 20 records consumed, offset 10 committed");
            return;
        }
        try (KafkaProducer<byte[], byte[]> p = producer()) {
            for (int i = 20; i < 25; i++) {
                p.send(new ProducerRecord<>(t, 0, null, utf8("r-" + i))).get();
            }
        }
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer("group.id", t, "auto.offset.reset", "none")) {
            OffsetAndMetadata om = c.committed(Set.of(tp)).get(tp);
            if (om == null || om.offset() != 10 || !om.metadata().equals("java-" + id)) {
                mismatch("committed after the restart: " + om);
            }
            c.subscribe(List.of(t));
            long end = System.currentTimeMillis() + DEADLINE_MS;
            while (got.size() < 15 && System.currentTimeMillis() < end) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
                    got.add(r.offset() + ":" + str(r.value()));
                }
            }
        }
        for (int i = 0; i < 15; i++) {
            String want = (10 + i) + ":r-" + (10 + i);
            if (i >= got.size() || !got.get(i).equals(want)) {
                mismatch("after the restart record " + i + ": " + (i < got.size() ? got.get(i) : "none") + ", expected " + want);
            }
        }
        System.out.println("restart: resumed at the committed offset 10, read 10..24");
    }

    private void idempotent() throws Exception {
        String t = topic("idem");
        try (Admin admin = admin()) {
            createTopic(admin, t, 1);
        }
        try (KafkaProducer<byte[], byte[]> p = producer("enable.idempotence", "true", "acks", "all",
                "max.in.flight.requests.per.connection", "5", "batch.size", "2048")) {
            for (int i = 0; i < 1000; i++) {
                p.send(new ProducerRecord<>(t, 0, null, utf8("i-" + i)));
            }
            p.flush();
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(t, 1000);
        for (int i = 0; i < got.size(); i++) {
            if (got.get(i).offset() != i || !str(got.get(i).value()).equals("i-" + i)) {
                mismatch("offset " + got.get(i).offset() + ": " + str(got.get(i).value()) + ", expected i-" + i);
            }
        }
        System.out.println("idempotent: 1000 records once each, in order");
    }

    private void txn() throws Exception {
        String t = topic("txn");
        try (Admin admin = admin()) {
            createTopic(admin, t, 1);
        }
        try (KafkaProducer<byte[], byte[]> p = producer("transactional.id", t, "max.block.ms", "30000")) {
            p.initTransactions();
            String[][] txns = {{"t", "0", "commit"}, {"a", "0", "abort"}, {"t", "5", "commit"}};
            for (String[] tx : txns) {
                p.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    p.send(new ProducerRecord<>(t, 0, null, utf8(tx[0] + "-" + (Integer.parseInt(tx[1]) + i))));
                }
                if (tx[2].equals("commit")) {
                    p.commitTransaction();
                } else {
                    p.flush();
                    p.abortTransaction();
                }
            }
        }
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer("isolation.level", "read_committed")) {
            TopicPartition tp = new TopicPartition(t, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = System.currentTimeMillis() + DEADLINE_MS;
            while (got.size() < 10 && System.currentTimeMillis() < end) {
                c.poll(POLL).forEach(r -> got.add(str(r.value())));
            }
            c.poll(Duration.ofMillis(500)).forEach(r -> got.add(str(r.value())));
        }
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            want.add("t-" + i);
        }
        if (!got.equals(want)) {
            mismatch("read_committed read " + got + ", expected " + want);
        }
        System.out.println("txn: read_committed read the 10 committed records, not the aborted 5");
    }

    private String topicConfig(Admin admin, ConfigResource res, String key, ConfigEntry.ConfigSource src) throws Exception {
        Config cfg = admin.describeConfigs(List.of(res)).all().get().get(res);
        ConfigEntry e = cfg.get(key);
        if (e == null) {
            mismatch(key + " not described");
            return null;
        }
        if (e.source() != src) {
            mismatch(key + "=" + e.value() + " has source " + e.source() + ", expected " + src);
        }
        return e.value();
    }

    private void configs() throws Exception {
        String t = topic("configs");
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, t);
        try (Admin admin = admin()) {
            createTopic(admin, t, 1);
            String v = topicConfig(admin, res, "retention.ms", ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            if (!"604800000".equals(v)) {
                mismatch("retention.ms is " + v + ", expected 604800000");
            }
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("retention.ms", "123456789"), AlterConfigOp.OpType.SET)))).all().get();
            v = topicConfig(admin, res, "retention.ms", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            if (!"123456789".equals(v)) {
                mismatch("retention.ms after SET is " + v + ", expected 123456789");
            }
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            v = topicConfig(admin, res, "retention.ms", ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            if (!"604800000".equals(v)) {
                mismatch("retention.ms after DELETE is " + v + ", expected 604800000");
            }
        }
        System.out.println("configs: retention.ms 604800000 (default), SET 123456789 (dynamic), DELETE back to default");
    }
}
