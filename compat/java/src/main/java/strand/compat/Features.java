package strand.compat;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.Node;

/**
 * The Java Admin client's feature and quorum calls against a broker, for
 * compat/features-java.sh and compat/quorum-java.sh:
 *
 *   describe BOOTSTRAP    describeFeatures(): "supported NAME MIN MAX" and
 *                         "finalized NAME MIN MAX" lines (by name), then
 *                         "epoch N"; describeMetadataQuorum(): "quorum
 *                         LEADER EPOCH HW", "voter ID LEO" lines, "observers
 *                         N"; describeCluster(): "cluster ID"
 *   quorum CONTROLLERS    describeMetadataQuorum() through the controllers
 *                         (bootstrap.controllers, as --bootstrap-controller):
 *                         "quorum LEADER EPOCH HW", "voter ID LEO LASTFETCH
 *                         LASTCAUGHTUP" lines (by id, -1 for an unknown
 *                         time), "observers N"; describeCluster(): "cluster
 *                         ID", "controller ID" (the active controller)
 *   cluster CONTROLLERS   describeCluster() through the controllers:
 *                         "cluster ID", "controller ID" (-1 for none),
 *                         "node ID HOST PORT" lines (by id)
 *   update BOOTSTRAP NAME:LEVEL:TYPE[:validate]...
 *                         one updateFeatures() call per argument, of one
 *                         feature (TYPE upgrade, safe or unsafe), in turn:
 *                         a line "ok", or "error CLASS: MESSAGE", each
 *
 * Exits 0, or 1 on an unexpected failure.
 */
public final class Features {
    private Features() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("describe")) {
            try (Admin admin = admin(args[1])) {
                describe(admin);
            }
        } else if (args.length == 2 && args[0].equals("quorum")) {
            try (Admin admin = controllers(args[1])) {
                quorum(admin);
            }
        } else if (args.length == 2 && args[0].equals("cluster")) {
            try (Admin admin = controllers(args[1])) {
                cluster(admin);
            }
        } else if (args.length >= 3 && args[0].equals("update")) {
            try (Admin admin = admin(args[1])) {
                for (int i = 2; i < args.length; i++) {
                    String[] u = args[i].split(":");
                    update(admin, u[0], Short.parseShort(u[1]), u[2], u.length == 4);
                }
            }
        } else {
            System.err.println("usage: describe BOOTSTRAP | quorum CONTROLLERS | cluster CONTROLLERS | update BOOTSTRAP NAME:LEVEL:TYPE[:validate]...");
            System.exit(1);
        }
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    private static Admin controllers(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    private static void quorum(Admin admin) throws Exception {
        QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
        System.out.println("quorum " + q.leaderId() + " " + q.leaderEpoch() + " " + q.highWatermark());
        TreeMap<Integer, QuorumInfo.ReplicaState> voters = new TreeMap<>();
        for (QuorumInfo.ReplicaState r : q.voters()) {
            voters.put(r.replicaId(), r);
        }
        for (QuorumInfo.ReplicaState r : voters.values()) {
            System.out.println("voter " + r.replicaId() + " " + r.logEndOffset() + " "
                + r.lastFetchTimestamp().orElse(-1L) + " " + r.lastCaughtUpTimestamp().orElse(-1L));
        }
        System.out.println("observers " + q.observers().size());
        System.out.println("cluster " + admin.describeCluster().clusterId().get());
        System.out.println("controller " + admin.describeCluster().controller().get().id());
    }

    private static void cluster(Admin admin) throws Exception {
        DescribeClusterResult dc = admin.describeCluster();
        System.out.println("cluster " + dc.clusterId().get());
        Node controller = dc.controller().get();
        System.out.println("controller " + (controller == null ? -1 : controller.id()));
        TreeMap<Integer, Node> nodes = new TreeMap<>();
        for (Node n : dc.nodes().get()) {
            nodes.put(n.id(), n);
        }
        for (Node n : nodes.values()) {
            System.out.println("node " + n.id() + " " + n.host() + " " + n.port());
        }
    }

    private static void describe(Admin admin) throws Exception {
        FeatureMetadata fm = admin.describeFeatures().featureMetadata().get();
        for (Map.Entry<String, SupportedVersionRange> e : new TreeMap<>(fm.supportedFeatures()).entrySet()) {
            System.out.println("supported " + e.getKey() + " " + e.getValue().minVersion() + " "
                + e.getValue().maxVersion());
        }
        for (Map.Entry<String, FinalizedVersionRange> e : new TreeMap<>(fm.finalizedFeatures()).entrySet()) {
            System.out.println("finalized " + e.getKey() + " " + e.getValue().minVersionLevel() + " "
                + e.getValue().maxVersionLevel());
        }
        System.out.println("epoch " + fm.finalizedFeaturesEpoch().orElse(-1L));
        QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
        System.out.println("quorum " + q.leaderId() + " " + q.leaderEpoch() + " " + q.highWatermark());
        for (QuorumInfo.ReplicaState r : q.voters()) {
            System.out.println("voter " + r.replicaId() + " " + r.logEndOffset());
        }
        System.out.println("observers " + q.observers().size());
        System.out.println("cluster " + admin.describeCluster().clusterId().get());
    }

    private static void update(Admin admin, String name, short level, String type, boolean validate)
            throws Exception {
        FeatureUpdate.UpgradeType t = type.equals("upgrade") ? FeatureUpdate.UpgradeType.UPGRADE
            : type.equals("safe") ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE
            : FeatureUpdate.UpgradeType.UNSAFE_DOWNGRADE;
        try {
            admin.updateFeatures(Map.of(name, new FeatureUpdate(level, t)),
                new UpdateFeaturesOptions().validateOnly(validate)).all().get();
            System.out.println("ok");
        } catch (ExecutionException e) {
            System.out.println("error " + e.getCause().getClass().getSimpleName() + ": "
                + e.getCause().getMessage());
        }
    }
}
