/* Vector stores against rep movsb on the Zen 5 VM (2026-12-02), for docs/kernels.md, "On a Zen 5
   EPYC". Build and run: gcc -O2 -mavx512f vector_copy_probe.c -o p && for s in 8192 32768 262144; do taskset -c 0 ./p $s; done
   GB/s counts every byte read and written (copies 2x, adds 3x the size), as tccl-kernel-bench does.
   Output on that VM, alone on it. A first run, 06:31 UTC (the VM in its slower state):
     8192 B: memcpy 84  rep-movsb 192  avx512-copy 295  | add oop 305  add in place 306 GB/s (bytes read+written)
     8192 B: memcpy 173  rep-movsb 168  avx512-copy 256  | add oop 281  add in place 286 GB/s (bytes read+written)
     8192 B: memcpy 180  rep-movsb 191  avx512-copy 302  | add oop 274  add in place 291 GB/s (bytes read+written)
     32768 B: memcpy 192  rep-movsb 184  avx512-copy 136  | add oop 132  add in place 243 GB/s (bytes read+written)
     32768 B: memcpy 186  rep-movsb 193  avx512-copy 136  | add oop 130  add in place 242 GB/s (bytes read+written)
     32768 B: memcpy 185  rep-movsb 193  avx512-copy 137  | add oop 131  add in place 238 GB/s (bytes read+written)
     262144 B: memcpy 182  rep-movsb 202  avx512-copy 198  | add oop 127  add in place 227 GB/s (bytes read+written)
     262144 B: memcpy 174  rep-movsb 174  avx512-copy 160  | add oop 108  add in place 232 GB/s (bytes read+written)
     262144 B: memcpy 199  rep-movsb 208  avx512-copy 193  | add oop 122  add in place 260 GB/s (bytes read+written)
   A second, 06:33 UTC:
     8192 B: memcpy 252  rep-movsb 253  avx512-copy 432  | add oop 586  add in place 611 GB/s (bytes read+written)
     8192 B: memcpy 251  rep-movsb 254  avx512-copy 433  | add oop 541  add in place 564 GB/s (bytes read+written)
     8192 B: memcpy 244  rep-movsb 256  avx512-copy 382  | add oop 352  add in place 530 GB/s (bytes read+written)
     32768 B: memcpy 260  rep-movsb 269  avx512-copy 159  | add oop 148  add in place 248 GB/s (bytes read+written)
     32768 B: memcpy 186  rep-movsb 195  avx512-copy 148  | add oop 135  add in place 242 GB/s (bytes read+written)
     32768 B: memcpy 198  rep-movsb 276  avx512-copy 162  | add oop 158  add in place 263 GB/s (bytes read+written)
     262144 B: memcpy 214  rep-movsb 215  avx512-copy 200  | add oop 200  add in place 289 GB/s (bytes read+written)
     262144 B: memcpy 205  rep-movsb 211  avx512-copy 204  | add oop 199  add in place 293 GB/s (bytes read+written)
     262144 B: memcpy 203  rep-movsb 214  avx512-copy 204  | add oop 200  add in place 293 GB/s (bytes read+written)
*/
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) void vcopy(float*d,const float*s,size_t n){for(size_t i=0;i<n;i+=64){
 __m512 a=_mm512_load_ps(s+i),b=_mm512_load_ps(s+i+16),c=_mm512_load_ps(s+i+32),e=_mm512_load_ps(s+i+48);
 _mm512_store_ps(d+i,a);_mm512_store_ps(d+i+16,b);_mm512_store_ps(d+i+32,c);_mm512_store_ps(d+i+48,e);}}
__attribute__((noinline)) void vadd(float*d,const float*x,const float*y,size_t n){for(size_t i=0;i<n;i+=64){
 for(int k=0;k<64;k+=16) _mm512_store_ps(d+i+k,_mm512_add_ps(_mm512_load_ps(x+i+k),_mm512_load_ps(y+i+k)));}}
__attribute__((noinline)) void movsb(void*d,const void*s,size_t n){__asm__ volatile("rep movsb":"+D"(d),"+S"(s),"+c"(n)::"memory");}
int main(int argc,char**argv){ size_t bytes=argc>1?atol(argv[1]):32768; size_t n=bytes/4; int reps=(int)(2e9/bytes);
 float*a=aligned_alloc(64,bytes),*b=aligned_alloc(64,bytes),*c=aligned_alloc(64,bytes); memset(a,0,bytes);memset(b,0,bytes);memset(c,0,bytes);
 for(int round=0;round<3;round++){
 double t=now(); for(int r=0;r<reps;r++){memcpy(b,a,bytes);__asm__ volatile(""::"r"(b):"memory");} double tm=now()-t;
 t=now(); for(int r=0;r<reps;r++){movsb(b,a,bytes);} double tr=now()-t;
 t=now(); for(int r=0;r<reps;r++){vcopy(b,a,n);} double tv=now()-t;
 t=now(); for(int r=0;r<reps;r++){vadd(c,a,b,n);} double ta=now()-t;
 t=now(); for(int r=0;r<reps;r++){vadd(a,a,b,n);} double ti=now()-t;
 printf("%zu B: memcpy %.0f  rep-movsb %.0f  avx512-copy %.0f  | add oop %.0f  add in place %.0f GB/s (bytes read+written)\n",bytes,
   2.0*bytes*reps/tm/1e9,2.0*bytes*reps/tr/1e9,2.0*bytes*reps/tv/1e9,3.0*bytes*reps/ta/1e9,3.0*bytes*reps/ti/1e9);}
}
