package strand.compat;

import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AclOperation;
import java.util.Collection;
import java.util.Set;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Java half of compat/java.sh.
 *
 *   create BOOTSTRAP TOPIC PARTITIONS   create the topic through the Admin client
 *   consume BOOTSTRAP TOPIC             read every partition from the beginning to
 *                                       its end offset with an assign()-based
 *                                       KafkaConsumer; print "partition TAB key TAB
 *                                       value" lines, partition by partition
 *   commit BOOTSTRAP TOPIC GROUP        the same read with the consumer of the
 *                                       KIP-848 protocol (group.protocol=consumer,
 *                                       which names topics by id in its offset
 *                                       commits and fetches), commitSync of the
 *                                       positions with metadata "p<partition>",
 *                                       then a new consumer's position() and
 *                                       committed(): print "partition TAB offset
 *                                       TAB metadata TAB position" lines
 *
 * Exits 0 on success, 1 on any error, 2 when the offsets read are not
 * 0..end-1 without a gap.
 */
public final class Compat {
    private Compat() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("create")) {
            create(args[1], args[2], Integer.parseInt(args[3]));
        } else if (args.length == 3 && args[0].equals("consume")) {
            System.exit(consume(args[1], args[2]));
        } else if (args.length == 4 && args[0].equals("commit")) {
            System.exit(commit(args[1], args[2], args[3]));
        } else {
            System.err.println("usage: create BOOTSTRAP TOPIC PARTITIONS | consume BOOTSTRAP TOPIC"
                + " | commit BOOTSTRAP TOPIC GROUP");
            System.exit(1);
        }
    }

    private static void create(String bootstrap, String topic, int partitions) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            System.out.println("created " + topic);
            // DescribeCluster at the newest version both sides know (v2 in 4.x).
            DescribeClusterResult dc = admin.describeCluster(
                new DescribeClusterOptions().includeAuthorizedOperations(true));
            Collection<Node> nodes = dc.nodes().get();
            String clusterId = dc.clusterId().get();
            Node controller = dc.controller().get();
            Set<AclOperation> ops = dc.authorizedOperations().get();
            String want = bootstrap;
            if (nodes.size() != 1) {
                throw new IllegalStateException("describeCluster: " + nodes.size() + " nodes");
            }
            Node n = nodes.iterator().next();
            if (!(n.host() + ":" + n.port()).equals(want) || clusterId == null || clusterId.isEmpty()
                || controller == null || ops == null || !ops.contains(AclOperation.DESCRIBE)) {
                throw new IllegalStateException("describeCluster: node " + n + ", cluster " + clusterId
                    + ", controller " + controller + ", operations " + ops);
            }
            System.out.println("describeCluster: node " + n.id() + " at " + want + ", cluster "
                + clusterId + ", " + ops.size() + " authorized operations");
        }
    }

    private static Properties consumerProps(String bootstrap) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
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

    /** Reads parts from their start to their end offsets into got; false on a timeout. */
    private static boolean readAll(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> parts,
                                   Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got) {
        consumer.seekToBeginning(parts);
        Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(30));
        long want = 0;
        long have = 0;
        for (TopicPartition tp : parts) {
            want += end.get(tp);
            got.put(tp, new ArrayList<>());
        }
        long deadline = System.currentTimeMillis() + 60_000;
        while (have < want) {
            if (System.currentTimeMillis() > deadline) {
                System.err.println("read " + have + " of " + want + " records in 60 s");
                return false;
            }
            for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(500))) {
                got.get(new TopicPartition(rec.topic(), rec.partition())).add(rec);
                have++;
            }
        }
        return true;
    }

    private static int consume(String bootstrap, String topic) throws Exception {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(bootstrap))) {
            List<TopicPartition> parts = assignAll(consumer, topic);
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got = new HashMap<>();
            return readAll(consumer, parts, got) ? print(parts, got) : 1;
        }
    }

    private static int commit(String bootstrap, String topic, String group) throws Exception {
        Properties props = consumerProps(bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        List<TopicPartition> parts;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            parts = assignAll(consumer, topic);
            if (!readAll(consumer, parts, new HashMap<>())) {
                return 1;
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (TopicPartition tp : parts) {
                offsets.put(tp, new OffsetAndMetadata(consumer.position(tp), "p" + tp.partition()));
            }
            consumer.commitSync(offsets, Duration.ofSeconds(30));
        }
        // The new consumer starts at the committed offsets (its first fetch
        // of them may name topics before it knows their ids), then asks for
        // them again, by id.
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

    private static int print(List<TopicPartition> parts,
                             Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got) throws Exception {
        OutputStream out = new BufferedOutputStream(System.out);
        for (TopicPartition tp : parts) {
            long next = 0;
            for (ConsumerRecord<byte[], byte[]> rec : got.get(tp)) {
                if (rec.offset() != next) {
                    System.err.println(tp + ": offset " + rec.offset() + ", expected " + next);
                    return 2;
                }
                next++;
                out.write(Integer.toString(tp.partition()).getBytes(StandardCharsets.US_ASCII));
                out.write('\t');
                if (rec.key() != null) {
                    out.write(rec.key());
                }
                out.write('\t');
                if (rec.value() != null) {
                    out.write(rec.value());
                }
                out.write('\n');
            }
        }
        out.flush();
        return 0;
    }
}
