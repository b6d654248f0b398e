/* Pointer chasing through a shuffled linked list of NODES nodes, ROUNDS rounds:
 * irregular loads. bench/bench_budget.py. */
#include <stdio.h>
#ifndef NODES
#define NODES 4096
#endif
#ifndef ROUNDS
#define ROUNDS 20
#endif
struct node { struct node *next; long value; };
static struct node pool[NODES];
static int order[NODES];
int main(void) {
    unsigned x = 12345u;
    for (int i = 0; i < NODES; i++) order[i] = i;
    for (int i = NODES - 1; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)(x % (unsigned)(i + 1));
        int t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (int i = 0; i < NODES; i++) {
        pool[order[i]].next = &pool[order[(i + 1) % NODES]];
        pool[order[i]].value = i;
    }
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        struct node *p = &pool[order[0]];
        for (int i = 0; i < NODES; i++) { sum += p->value * (r + 1); p = p->next; }
    }
    printf("sum %ld\n", sum);
    return 0;
}
