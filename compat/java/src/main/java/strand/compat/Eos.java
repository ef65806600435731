package strand.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The exactly-once consume-transform-produce loop of compat/txn-java.sh,
 * and what the script needs around it and around a transaction left open:
 *
 *   produce BS TOPIC N      N records "key-i" = "value-i" (idempotent,
 *                           acks=all, partitioned by key): "produced N"
 *   loop BS IN OUT GROUP TXNID STOP
 *                           a read_committed consumer of GROUP (no auto
 *                           commit) and a transactional producer TXNID; per
 *                           polled batch (50 records at most): begin, each
 *                           record to OUT with its key and its value upper-
 *                           cased, flush, "open K", the batch's offsets by
 *                           sendOffsetsToTransaction with the consumer's
 *                           group metadata, "offsets K", commit, "committed
 *                           TOTAL" (records of this process); "done TOTAL"
 *                           once it owns every partition of IN and is at
 *                           their ends. STOP "open:C" or "offsets:C": after
 *                           C commits, the next batch stops after that line
 *                           and waits there, in its transaction, for the
 *                           script's SIGKILL; "none": runs to the end
 *   verify BS OUT N         OUT from its start to its end at read_committed:
 *                           "read_committed records R distinct D duplicates
 *                           X missing M mismatched Y" (values VALUE-0 ..
 *                           VALUE-(N-1), each with the key it came with),
 *                           then at read_uncommitted: "read_uncommitted
 *                           records U"
 *   hang BS TOPIC TXNID     a transactional producer (transaction.timeout.ms
 *                           60000) sends 3 records to partition 0 of TOPIC
 *                           in a transaction, flushes, prints "open" and
 *                           sleeps until killed
 *   fence BS TXNID          initTransactions() of a new producer with the
 *                           same transactional id: "fenced"
 *   count BS TOPIC          TOPIC read whole: "read_committed R
 *                           read_uncommitted U"
 *
 * Exits 0, or 1 on an unexpected failure (with its stack trace).
 */
public final class Eos {
    private Eos() {
    }

    public static void main(String[] args) throws Exception {
        String cmd = args.length > 0 ? args[0] : "";
        if (cmd.equals("produce") && args.length == 4) {
            produce(args[1], args[2], Integer.parseInt(args[3]));
        } else if (cmd.equals("loop") && args.length == 7) {
            loop(args[1], args[2], args[3], args[4], args[5], args[6]);
        } else if (cmd.equals("verify") && args.length == 4) {
            verify(args[1], args[2], Integer.parseInt(args[3]));
        } else if (cmd.equals("hang") && args.length == 4) {
            hang(args[1], args[2], args[3]);
        } else if (cmd.equals("fence") && args.length == 3) {
            fence(args[1], args[2]);
        } else if (cmd.equals("count") && args.length == 3) {
            say("read_committed " + readAll(args[1], args[2], "read_committed").size()
                + " read_uncommitted " + readAll(args[1], args[2], "read_uncommitted").size());
        } else {
            System.err.println("usage: produce BS TOPIC N | loop BS IN OUT GROUP TXNID STOP"
                + " | verify BS OUT N | hang BS TOPIC TXNID | fence BS TXNID | count BS TOPIC");
            System.exit(1);
        }
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return p;
    }

    static Properties consumerProps(String bootstrap, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return p;
    }

    private static void produce(String bootstrap, String topic, int n) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i));
            }
            producer.flush();
        }
        say("produced " + n);
    }

    private static void loop(String bootstrap, String in, String out, String group, String txnId,
                             String stop) throws Exception {
        String stopAt = stop.contains(":") ? stop.substring(0, stop.indexOf(':')) : "";
        int stopAfter = stop.contains(":") ? Integer.parseInt(stop.substring(stop.indexOf(':') + 1)) : -1;
        int commits = 0;
        Properties pp = producerProps(bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        Properties cp = consumerProps(bootstrap, "read_committed");
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        // The member a SIGKILL left behind is out of the group after 6 s
        // (the broker's smallest session timeout), not the default 45.
        cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        cp.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        long total = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            // First: the transaction a killed predecessor left open is
            // aborted (and its pending offsets with it) before the consumer
            // asks for the committed ones.
            producer.initTransactions();
            say("initialized");
            consumer.subscribe(List.of(in));
            int partitions = consumer.partitionsFor(in).size();
            while (true) {
                ConsumerRecords<String, String> recs = consumer.poll(Duration.ofMillis(500));
                if (recs.isEmpty()) {
                    if (caughtUp(consumer, partitions)) {
                        break;
                    }
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (TopicPartition tp : recs.partitions()) {
                    List<ConsumerRecord<String, String>> list = recs.records(tp);
                    for (ConsumerRecord<String, String> r : list) {
                        producer.send(new ProducerRecord<>(out, r.key(), r.value().toUpperCase(Locale.ROOT)));
                    }
                    offsets.put(tp, new OffsetAndMetadata(list.get(list.size() - 1).offset() + 1));
                }
                producer.flush();
                say("open " + recs.count());
                stopAt(stopAt.equals("open") && commits == stopAfter);
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                say("offsets " + recs.count());
                stopAt(stopAt.equals("offsets") && commits == stopAfter);
                producer.commitTransaction();
                commits++;
                total += recs.count();
                say("committed " + total);
            }
        }
        say("done " + total);
    }

    /** When STOP is true, waits for the SIGKILL (the consumer's heartbeat
     *  thread keeps the member in its group meanwhile). */
    private static void stopAt(boolean stop) throws InterruptedException {
        if (stop) {
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    private static boolean caughtUp(KafkaConsumer<String, String> consumer, int partitions) {
        Set<TopicPartition> assigned = consumer.assignment();
        if (assigned.size() != partitions) {
            return false;
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(assigned);
        for (TopicPartition tp : assigned) {
            if (consumer.position(tp) < ends.get(tp)) {
                return false;
            }
        }
        return true;
    }

    /** Every record of TOPIC from its start to its end at ISOLATION. */
    static List<ConsumerRecord<String, String>> readAll(String bootstrap, String topic,
                                                        String isolation) {
        List<ConsumerRecord<String, String>> all = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap, isolation))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                tps.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 30000;
            while (!atEnds(consumer, ends)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("not at the ends " + ends + " of " + topic
                        + " at " + isolation + " after 30 s");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    all.add(r);
                }
            }
        }
        return all;
    }

    private static boolean atEnds(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static void verify(String bootstrap, String topic, int n) {
        int[] seen = new int[n];
        int records = 0;
        int mismatched = 0;
        int outside = 0;
        for (ConsumerRecord<String, String> r : readAll(bootstrap, topic, "read_committed")) {
            records++;
            String v = r.value();
            int i = -1;
            if (v != null && v.startsWith("VALUE-")) {
                try {
                    i = Integer.parseInt(v.substring(6));
                } catch (NumberFormatException e) {
                    i = -1;
                }
            }
            if (i < 0 || i >= n) {
                outside++;
                continue;
            }
            seen[i]++;
            if (!("key-" + i).equals(r.key())) {
                mismatched++;
            }
        }
        int distinct = 0;
        int duplicates = 0;
        int missing = 0;
        for (int c : seen) {
            if (c > 0) {
                distinct++;
            }
            if (c > 1) {
                duplicates += c - 1;
            }
            if (c == 0) {
                missing++;
            }
        }
        say("read_committed records " + records + " distinct " + distinct + " duplicates " + duplicates
            + " missing " + missing + " mismatched " + (mismatched + outside));
        say("read_uncommitted records " + readAll(bootstrap, topic, "read_uncommitted").size());
    }

    private static void hang(String bootstrap, String topic, String txnId) throws Exception {
        Properties pp = producerProps(bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
        KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
        producer.initTransactions();
        producer.beginTransaction();
        for (int i = 0; i < 3; i++) {
            producer.send(new ProducerRecord<>(topic, 0, "k" + i, "open-" + i));
        }
        producer.flush();
        say("open");
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void fence(String bootstrap, String txnId) {
        Properties pp = producerProps(bootstrap);
        pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            producer.initTransactions();
        }
        say("fenced");
    }
}
