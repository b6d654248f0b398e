/* Dijkstra: single-source shortest paths on a dense 50-node graph (MiBench-style).
 * Runs from the first SOURCES nodes with an O(V^2) array-based scan and prints
 * the sum of all finite distances as the checksum. Deterministic (fixed LCG seed). */
#include <stdio.h>

#define NODES 50
#define SOURCES 10
#define INF 0x3fffffff

static int adj[NODES][NODES];
static int dist[NODES];
static int done[NODES];
static unsigned int seed = 12345u;

static unsigned int lcg(void) { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7fff; }

static void build_graph(void) {
    for (int i = 0; i < NODES; i++)
        for (int j = 0; j < NODES; j++) {
            unsigned int r = lcg();
            adj[i][j] = (i != j && r % 4 != 0) ? (int)(1 + r % 97) : INF;
        }
}

static void dijkstra(int src) {
    for (int i = 0; i < NODES; i++) { dist[i] = INF; done[i] = 0; }
    dist[src] = 0;
    for (int k = 0; k < NODES; k++) {
        int u = -1, best = INF;
        for (int i = 0; i < NODES; i++)
            if (!done[i] && dist[i] < best) { best = dist[i]; u = i; }
        if (u < 0) break;
        done[u] = 1;
        for (int v = 0; v < NODES; v++)
            if (adj[u][v] != INF && dist[u] + adj[u][v] < dist[v]) dist[v] = dist[u] + adj[u][v];
    }
}

int main(void) {
    long long checksum = 0;
    build_graph();
    for (int s = 0; s < SOURCES; s++) {
        dijkstra(s);
        for (int i = 0; i < NODES; i++) if (dist[i] != INF) checksum += dist[i];
    }
    printf("checksum: %lld\n", checksum);
    return 0;
}
