package strand.compat.versions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Java half of the KIP-848 step of compat/versions-java.sh:
 *
 *   Commit BOOTSTRAP TOPIC GROUP
 *
 * reads every partition of TOPIC from its start to its end offset with the
 * consumer of the KIP-848 protocol (group.protocol=consumer: it names topics
 * by id in its offset commits and fetches) on assign(), which needs no group
 * heartbeats; commits the positions with metadata "p<partition>"; then a new
 * consumer of the group starts at the committed offsets (position()) and asks
 * for them again (committed()). Prints "partition TAB offset TAB metadata TAB
 * position" lines. Exits 0, or 1 on a timeout or error.
 */
public final class Commit {
    private Commit() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Commit BOOTSTRAP TOPIC GROUP");
            System.exit(1);
        }
        System.exit(run(args[0], args[1], args[2]));
    }

    private static List<TopicPartition> assignAll(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        List<TopicPartition> parts = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
            parts.add(new TopicPartition(topic, info.partition()));
        }
        parts.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
        consumer.assign(parts);
        return parts;
    }

    /** Reads parts from their start to their end offsets; false on a timeout. */
    private static boolean readAll(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> parts) {
        consumer.seekToBeginning(parts);
        Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(30));
        long want = 0;
        long have = 0;
        for (TopicPartition tp : parts) {
            want += end.get(tp);
        }
        long deadline = System.currentTimeMillis() + 60_000;
        while (have < want) {
            if (System.currentTimeMillis() > deadline) {
                System.err.println("read " + have + " of " + want + " records in 60 s");
                return false;
            }
            have += consumer.poll(Duration.ofMillis(500)).count();
        }
        return true;
    }

    private static int run(String bootstrap, String topic, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        List<TopicPartition> parts;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            parts = assignAll(consumer, topic);
            if (!readAll(consumer, parts)) {
                return 1;
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (TopicPartition tp : parts) {
                offsets.put(tp, new OffsetAndMetadata(consumer.position(tp), "p" + tp.partition()));
            }
            consumer.commitSync(offsets, Duration.ofSeconds(30));
        }
        // The new consumer's first fetch of the offsets may name topics
        // before it knows their ids; committed() after position() does not.
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            assignAll(consumer, topic);
            Map<TopicPartition, Long> start = new HashMap<>();
            for (TopicPartition tp : parts) {
                start.put(tp, consumer.position(tp, Duration.ofSeconds(30)));
            }
            Map<TopicPartition, OffsetAndMetadata> back =
                consumer.committed(new HashSet<>(parts), Duration.ofSeconds(30));
            for (TopicPartition tp : parts) {
                OffsetAndMetadata om = back.get(tp);
                System.out.println(tp.partition() + "\t" + (om == null ? "none" : om.offset() + "\t"
                    + om.metadata()) + "\t" + start.get(tp));
            }
        }
        return 0;
    }
}
