package strand.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Kafka Streams word count of compat/txn-java.sh, exactly once (v2):
 *
 *   lines BS TOPIC FROM TO  lines FROM .. TO-1 to TOPIC, line i keyed
 *                           "line-i" and made of the words alpha(i%5),
 *                           beta(i%7) and gamma(i*i%11): "produced N"
 *   run BS APP IN OUT STATEDIR SLOW_MS
 *                           the application APP: IN's lines split into
 *                           words, grouped by word (the repartition topic
 *                           APP-words-repartition), counted (the store
 *                           "counts", RocksDB, changelog APP-counts-
 *                           changelog), each new count to OUT (String key,
 *                           Long value); SLOW_MS of sleep per line read.
 *                           Prints "state S" at each state change and
 *                           "lines N" every 100 lines read; on SIGTERM it
 *                           closes and prints "closed"
 *   check BS OUT TO SECS    OUT read at read_committed, the latest value of
 *                           each word, until it is the count of lines
 *                           0 .. TO-1 for every word or SECS passed:
 *                           "counts exact: W words" or "counts wrong:"
 *                           and one "WORD got G want N" line each; then
 *                           "records read_committed C read_uncommitted U"
 *
 * Exits 0 (check: whatever it found), or 1 on an unexpected failure.
 */
public final class WordCount {
    private WordCount() {
    }

    public static void main(String[] args) throws Exception {
        String cmd = args.length > 0 ? args[0] : "";
        if (cmd.equals("lines") && args.length == 5) {
            lines(args[1], args[2], Long.parseLong(args[3]), Long.parseLong(args[4]));
        } else if (cmd.equals("run") && args.length == 7) {
            run(args[1], args[2], args[3], args[4], args[5], Long.parseLong(args[6]));
        } else if (cmd.equals("check") && args.length == 5) {
            check(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]));
        } else {
            System.err.println("usage: lines BS TOPIC FROM TO | run BS APP IN OUT STATEDIR SLOW_MS"
                + " | check BS OUT TO SECS");
            System.exit(1);
        }
    }

    static String[] words(long i) {
        return new String[] {"alpha" + (i % 5), "beta" + (i % 7), "gamma" + (i * i % 11)};
    }

    private static void lines(String bootstrap, String topic, long from, long to) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Eos.producerProps(bootstrap))) {
            for (long i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "line-" + i, String.join(" ", words(i))));
            }
            producer.flush();
        }
        Eos.say("produced " + (to - from));
    }

    private static void run(String bootstrap, String app, String in, String out, String stateDir,
                            long slowMs) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        // The member a SIGKILL left behind is out of the group after 6 s.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "6000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");

        AtomicLong read = new AtomicLong();
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(in)
            .peek((k, v) -> {
                if (slowMs > 0) {
                    try {
                        Thread.sleep(slowMs);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (read.incrementAndGet() % 100 == 0) {
                    Eos.say("lines " + read.get());
                }
            })
            .flatMapValues(v -> Arrays.asList(v.split(" ")))
            .groupBy((k, w) -> w, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(out, Produced.with(Serdes.String(), Serdes.Long()));

        CountDownLatch stopped = new CountDownLatch(1);
        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        streams.setStateListener((now, before) -> {
            Eos.say("state " + now);
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                stopped.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            Eos.say("error " + e);
            e.printStackTrace(System.out);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            Eos.say("closed");
        }));
        streams.start();
        stopped.await();
    }

    private static void check(String bootstrap, String topic, long to, int secs) throws Exception {
        Map<String, Long> want = new TreeMap<>();
        for (long i = 0; i < to; i++) {
            for (String w : words(i)) {
                want.merge(w, 1L, Long::sum);
            }
        }
        Map<String, Long> got = new TreeMap<>();
        Properties cp = Eos.consumerProps(bootstrap, "read_committed");
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        long committed = 0;
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(cp)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                tps.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + secs * 1000L;
            do {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    got.put(r.key(), r.value());
                    committed++;
                }
            } while (!got.equals(want) && System.currentTimeMillis() < deadline);
            // What is left up to the last stable offset, read too: the
            // verdict is on everything committed so far.
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    got.put(r.key(), r.value());
                    committed++;
                }
            }
        }
        if (got.equals(want)) {
            Eos.say("counts exact: " + want.size() + " words");
        } else {
            Eos.say("counts wrong:");
            TreeMap<String, Long> all = new TreeMap<>(want);
            got.forEach(all::putIfAbsent);
            for (String w : all.keySet()) {
                if (!String.valueOf(got.get(w)).equals(String.valueOf(want.get(w)))) {
                    Eos.say(w + " got " + got.get(w) + " want " + want.get(w));
                }
            }
        }
        Properties up = Eos.consumerProps(bootstrap, "read_uncommitted");
        long uncommitted = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(up)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                tps.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                uncommitted += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
        Eos.say("records read_committed " + committed + " read_uncommitted " + uncommitted);
    }
}
