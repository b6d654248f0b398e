/* List chase: a singly linked list of 2048 nodes built in a shuffled order (fixed LCG,
 * Fisher-Yates) inside an array pool, then traversed by pointer chasing for several
 * rounds, summing the values. Prints the sum and the visited-node count. */
#include <stdio.h>
#include <stdlib.h>

#define NODES 2048
#define ROUNDS 6

struct node {
    struct node *next;
    long value;
};

static unsigned int seed = 4242u;

static unsigned int lcg(void) { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7fff; }

int main(void) {
    struct node *pool = malloc(NODES * sizeof(struct node));
    int *order = malloc(NODES * sizeof(int));
    for (int i = 0; i < NODES; i++) {
        order[i] = i;
        pool[i].value = (long)(i * 31 % 1009);
    }
    for (int i = NODES - 1; i > 0; i--) {
        int j = (int)(((lcg() << 15) | lcg()) % (unsigned int)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < NODES - 1; i++)
        pool[order[i]].next = &pool[order[i + 1]];
    pool[order[NODES - 1]].next = NULL;
    struct node *head = &pool[order[0]];
    long sum = 0, visited = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (struct node *p = head; p != NULL; p = p->next) {
            sum += p->value * (r + 1);
            visited++;
        }
    printf("checksum: %ld %ld %d\n", sum, visited, order[0]);
    free(order);
    free(pool);
    return 0;
}
