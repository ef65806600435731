/* The bootstrap checkpoint of `strand format` (broker_boot.h).
 *
 * The file is a metadata snapshot in Kafka's format (a header control
 * record, the records, a footer control record, in record batches as a
 * log segment), written by the metadata snapshot module of the cluster
 * layer, which also loads it at start. That module is not in this tree
 * yet: until it is, nothing is written here, so that no second snapshot
 * writer exists; a formatted controller then bootstraps its metadata log
 * on its first start as an unformatted single node does (metadata.version
 * META_LOG_METADATA_VERSION, a static quorum). The checks of format
 * (release version, initial controllers) are made all the same. */
#include "broker/broker_boot.h"

int broker_boot_write(const char *meta_dir, const broker_boot_t *boot, char *err, size_t errlen)
{
    (void)meta_dir;
    (void)boot;
    (void)err;
    (void)errlen;
    return 0;
}
