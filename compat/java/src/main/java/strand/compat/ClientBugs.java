package strand.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java half of compat/client-bugs-java.sh: what the stock Java client
 * does with answers that Strand used to get wrong. Each command prints
 * lines the script compares (with Kafka's, where the script runs both).
 *
 *   record-errors BOOTSTRAP TOPIC    8 records in one batch to a compacted
 *                                    topic, 0, 2 and 5 without a key: one
 *                                    line per record, "i ExceptionClass"
 *   commit-metadata BOOTSTRAP TOPIC GROUP
 *                                    commits offset 5 with the metadata
 *                                    "Hello\0world!" and reads it back with
 *                                    a second consumer: "metadata N chars ok"
 *   txn BOOTSTRAP TXNID              initTransactions(): "failed after S s:
 *                                    ExceptionClass: message" or "ok"
 *   config-resources BOOTSTRAP       Admin.listConfigResources(): one
 *                                    "TYPE name" line each, sorted
 *
 * Exits 0 when the command ran (what it printed is the verdict), 1 on an
 * unexpected error.
 */
public final class ClientBugs {
    private ClientBugs() {}

    public static void main(String[] args) throws Exception {
        String cmd = args.length > 0 ? args[0] : "";
        if (cmd.equals("record-errors") && args.length == 3) {
            recordErrors(args[1], args[2]);
        } else if (cmd.equals("commit-metadata") && args.length == 4) {
            commitMetadata(args[1], args[2], args[3]);
        } else if (cmd.equals("txn") && args.length == 3) {
            txn(args[1], args[2]);
        } else if (cmd.equals("config-resources") && args.length == 2) {
            configResources(args[1]);
        } else {
            System.err.println("usage: record-errors BS TOPIC | commit-metadata BS TOPIC GROUP"
                + " | txn BS TXNID | config-resources BS");
            System.exit(1);
        }
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    private static void recordErrors(String bootstrap, String topic) throws Exception {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1000");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.RETRIES_CONFIG, "0");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.partitionsFor(topic);
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String key = i == 0 || i == 2 || i == 5 ? null : "k" + i;
                sent.add(producer.send(new ProducerRecord<>(topic, 0, key, "value " + i)));
            }
            producer.flush();
            for (int i = 0; i < 8; i++) {
                try {
                    sent.get(i).get();
                    System.out.println(i + " ok");
                } catch (java.util.concurrent.ExecutionException e) {
                    System.out.println(i + " " + e.getCause().getClass().getName());
                }
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    private static void commitMetadata(String bootstrap, String topic, String group) {
        String md = "Hello\u0000world!";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, group)) {
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5, md)), Duration.ofSeconds(60));
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, group)) {
            OffsetAndMetadata got = c.committed(java.util.Set.of(tp), Duration.ofSeconds(60)).get(tp);
            if (got == null) {
                System.out.println("metadata: nothing committed");
            } else if (got.offset() == 5 && md.equals(got.metadata())) {
                System.out.println("metadata " + got.metadata().length() + " chars ok");
            } else {
                System.out.println("metadata differs: offset " + got.offset() + ", "
                    + got.metadata().length() + " chars");
            }
        }
    }

    private static void txn(String bootstrap, String txnId) {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            long t0 = System.nanoTime();
            try {
                producer.initTransactions();
                System.out.println("ok");
            } catch (Exception e) {
                System.out.printf("failed after %.1f s: %s: %s%n", (System.nanoTime() - t0) / 1e9,
                    e.getClass().getName(), e.getMessage());
            }
        }
    }

    private static void configResources(String bootstrap) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            Collection<ConfigResource> all = admin.listConfigResources(
                EnumSet.of(ConfigResource.Type.TOPIC, ConfigResource.Type.BROKER,
                    ConfigResource.Type.BROKER_LOGGER),
                new org.apache.kafka.clients.admin.ListConfigResourcesOptions()).all().get();
            TreeSet<String> lines = new TreeSet<>();
            for (ConfigResource r : all) {
                lines.add(r.type() + " " + r.name());
            }
            lines.forEach(System.out::println);
        }
    }
}
