/* The copy curve of one thread on the Zen 5 VM (2026-12-02), for docs/performance.md, "A cache the
   machine does not describe". Build and run: gcc -O2 copy_curve.c -o copy_curve && taskset -c 0 ./copy_curve
   Output on that VM, alone on it (a first run, then the last five lines of a second):
        256 KiB: 107.0 GB/s
        512 KiB: 75.0 GB/s
       1024 KiB: 52.6 GB/s
       2048 KiB: 44.0 GB/s
       4096 KiB: 43.5 GB/s
       8192 KiB: 48.7 GB/s
      16384 KiB: 24.6 GB/s
      32768 KiB: 23.7 GB/s
      65536 KiB: 19.4 GB/s
     second run:
       4096 KiB: 43.7 GB/s
       8192 KiB: 50.3 GB/s
      16384 KiB: 23.1 GB/s
      32768 KiB: 20.2 GB/s
      65536 KiB: 19.1 GB/s
   (GB/s counts the bytes of both memcpys of a repetition, each buffer once: 2 x size per
   repetition; best of 20, of 5 from 16 MiB.)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){ for(size_t kb=256; kb<=65536; kb*=2){ size_t n=kb<<10; char*a=aligned_alloc(4096,n),*b=aligned_alloc(4096,n); memset(a,1,n);memset(b,2,n);
 double best=1e9; int reps= n>=(16u<<20)?5:20; for(int r=0;r<reps;r++){double t=now(); memcpy(b,a,n); memcpy(a,b,n); t=now()-t; if(t<best)best=t;}
 printf("%6zu KiB: %.1f GB/s\n",kb,2.0*n/best/1e9); free(a);free(b);} }
