# H200 eager L2 write-back microbenchmarks (issue 22); run under ncu by go.sh.  Each measured
# kernel is preceded by a cleaner (read 512 MiB of another buffer): under --cache-control none
# the cleaner that follows a kernel writes back what that kernel left dirty in the L2.
import cupy as cp,numpy as np,json,sys
K=cp.RawModule(code=r'''
__device__ unsigned long long gt(){unsigned long long t;asm volatile("mov.u64 %0,%%globaltimer;":"=l"(t));return t;}
#define IG long long i=blockIdx.x*(long long)blockDim.x+threadIdx.x,g=(long long)gridDim.x*blockDim.x;
extern "C"{
__global__ void wr(float4*d,long long n,long long ns){IG float4 v=make_float4(1,2,3,4);for(;i<n;i+=g)d[i]=v;
 if(ns){unsigned long long t=gt();while(gt()-t<(unsigned long long)ns);}}
__global__ void cp4(const float4*s,float4*d,long long n){IG for(;i<n;i+=g)d[i]=s[i];}
__global__ void rd(const float4*s,float*o,long long n){IG float a=0;for(;i<n;i+=g){float4 x=s[i];a+=x.x+x.y+x.z+x.w;}if(a==-1.f)o[0]=a;}
__global__ void wrs(float*d,long long n,int st){IG for(;i<n;i+=g)d[i*st]=1.f;}
}''')
F=K.get_function;G,B=(1056,),(256,);M=1<<20;I=np.int64
big=cp.ones(512*M//4,cp.float32);src=cp.ones(1024*M//4,cp.float32);dst=cp.ones(1024*M//4,cp.float32);o=cp.zeros(4,cp.float32)
L=[]
def run(lab,n,*a):F(n)(G,B,a);L.append(lab)
def m(lab,n,*a):run('clean','rd',big,o,I(big.size//4));run(lab,n,*a)
cp.cuda.runtime.deviceSynchronize()
for W in [1,2,4,8,12,16,20,24,28,32,40,48,64,96,128,256,1024]:m(f'wr {W}','wr',dst,I(W*M//16),I(0))
for W in [1,4,8,16,32,48,64,128,512]:m(f'cp {W}','cp4',src,dst,I(W*M//16))
for R in [8,64,256,1024]:m(f'rd {R}','rd',src,o,I(R*M//16))
for st in [2,8]:
 for W in [8,32,128]:m(f'wrs{st} {W}','wrs',dst,I(W*M//4//st),np.int32(st))
for W in [8,16,32]:
 for S in [2,5,10,20,50,100,200]:m(f'spin{S} {W}','wr',dst,I(W*M//16),I(S*1000))
run('clean','rd',big,o,I(big.size//4));cp.cuda.runtime.deviceSynchronize()
json.dump(L,open(sys.argv[1],'w'))
