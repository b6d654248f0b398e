/* Divide and conquer: recursive maximum-subarray (the classic O(n log n) split with a
 * crossing sum) together with a recursive sum and maximum, over 1024 ints from a fixed
 * LCG. Prints the best subarray sum, the total and the maximum. Deterministic. */
#include <stdio.h>

#define COUNT 1024

static int v[COUNT];
static unsigned int seed = 99u;

static unsigned int lcg(void) { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7fff; }

static long max_crossing(int lo, int mid, int hi) {
    long s = 0, left = -1000000000L, right = -1000000000L;
    for (int i = mid - 1; i >= lo; i--) {
        s += v[i];
        if (s > left)
            left = s;
    }
    s = 0;
    for (int i = mid; i < hi; i++) {
        s += v[i];
        if (s > right)
            right = s;
    }
    return left + right;
}

static long max_subarray(int lo, int hi) {
    if (hi - lo == 1)
        return v[lo];
    int mid = lo + (hi - lo) / 2;
    long l = max_subarray(lo, mid);
    long r = max_subarray(mid, hi);
    long c = max_crossing(lo, mid, hi);
    long best = l > r ? l : r;
    return best > c ? best : c;
}

static long rsum(int lo, int hi) {
    if (hi - lo == 1)
        return v[lo];
    int mid = lo + (hi - lo) / 2;
    return rsum(lo, mid) + rsum(mid, hi);
}

static int rmax(int lo, int hi) {
    if (hi - lo == 1)
        return v[lo];
    int mid = lo + (hi - lo) / 2;
    int a = rmax(lo, mid), b = rmax(mid, hi);
    return a > b ? a : b;
}

int main(void) {
    for (int i = 0; i < COUNT; i++)
        v[i] = (int)(lcg() % 201) - 100;
    printf("checksum: %ld %ld %d\n", max_subarray(0, COUNT), rsum(0, COUNT), rmax(0, COUNT));
    return 0;
}
