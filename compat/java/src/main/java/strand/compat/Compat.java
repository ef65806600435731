package strand.compat;

import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
        } else {
            System.err.println("usage: create BOOTSTRAP TOPIC PARTITIONS | consume BOOTSTRAP TOPIC");
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

    private static int consume(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                parts.add(new TopicPartition(topic, info.partition()));
            }
            parts.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(30));
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> got = new HashMap<>();
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
                    return 1;
                }
                for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(500))) {
                    got.get(new TopicPartition(rec.topic(), rec.partition())).add(rec);
                    have++;
                }
            }
            return print(parts, got);
        }
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
