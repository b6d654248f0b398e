/* MiBench network/dijkstra in shape: a 100-node adjacency matrix (generated
 * here with a fixed LCG instead of read from input.dat), a malloc'd linked-list
 * queue, and shortest paths between PAIRS (source, destination) pairs.
 * PAIRS scales the run: 30 pairs ~ 74 M traced IR instructions at -O0,
 * like MiBench's small input.  Build-time knobs: -D PAIRS=N -D NUM_NODES=N. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NUM_NODES
#define NUM_NODES 100
#endif
#ifndef PAIRS
#define PAIRS 30
#endif
#define NONE 9999

struct qitem { int node, dist, prev; struct qitem *next; };

static int adj[NUM_NODES][NUM_NODES];
static struct { int dist, prev; } rg[NUM_NODES];
static struct qitem *head = NULL;
static int qcount = 0;
static unsigned int seed = 12345u;

static unsigned int lcg(void) { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7fff; }

static void enqueue(int node, int dist, int prev) {
    struct qitem *n = malloc(sizeof *n);
    if (!n) { fprintf(stderr, "out of memory\n"); exit(1); }
    n->node = node; n->dist = dist; n->prev = prev; n->next = NULL;
    if (!head) head = n;
    else { struct qitem *q = head; while (q->next) q = q->next; q->next = n; }
    qcount++;
}

static void dequeue(int *node, int *dist, int *prev) {
    struct qitem *k = head;
    if (head) { *node = k->node; *dist = k->dist; *prev = k->prev; head = k->next; free(k); qcount--; }
}

static long long dijkstra(int chStart, int chEnd) {
    int iNode, iDist, iPrev, i, iCost;
    for (i = 0; i < NUM_NODES; i++) { rg[i].dist = NONE; rg[i].prev = NONE; }
    if (chStart == chEnd) return 0;
    rg[chStart].dist = 0;
    enqueue(chStart, 0, NONE);
    while (qcount > 0) {
        dequeue(&iNode, &iDist, &iPrev);
        for (i = 0; i < NUM_NODES; i++) {
            if ((iCost = adj[iNode][i]) != NONE) {
                if (rg[i].dist == NONE || rg[i].dist > iCost + iDist) {
                    rg[i].dist = iDist + iCost;
                    rg[i].prev = iNode;
                    enqueue(i, iDist + iCost, iNode);
                }
            }
        }
    }
    long long hops = 0;
    for (i = chEnd; i != chStart && rg[i].prev != NONE; i = rg[i].prev) hops++;
    return (long long)rg[chEnd].dist * 1000 + hops;
}

int main(void) {
    for (int i = 0; i < NUM_NODES; i++)
        for (int j = 0; j < NUM_NODES; j++) {
            unsigned int r = lcg();
            adj[i][j] = (i == j) ? NONE : (r % 3 == 0 ? NONE : (int)(1 + r % 100));
        }
    long long checksum = 0;
    for (int k = 0, i = 0, j = NUM_NODES / 2; k < PAIRS; k++, i++, j++) {
        if (j >= NUM_NODES) j -= NUM_NODES;
        if (i >= NUM_NODES) i -= NUM_NODES;
        checksum += dijkstra(i, j);
    }
    printf("checksum: %lld\n", checksum);
    return 0;
}
