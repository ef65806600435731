/* strand: a Kafka-protocol broker. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "strand: not yet\n");
    return 1;
}
