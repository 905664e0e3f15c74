/* cpuid-cap: make a copy of the ONNX Runtime peer see a CPU without AVX-512.
 *
 * Dev-only measurement aid for tools/bench --peer-isa avx2, never part of the
 * product.  ONNX Runtime picks its kernels (MLAS, cpuinfo) from the CPUID
 * instruction and offers no switch to force a lower ISA, so on an AVX-512
 * machine its AVX2 kernels cannot otherwise be run beside ours
 * (NN_CPU=avx2).  tools/ort/cap-isa.py copies the peer's shared library and
 * replaces each CPUID instruction in its code (0F A2) with INT3 NOP (CC 90);
 * this library, preloaded into the peer's process, catches the SIGTRAP,
 * runs the real CPUID and clears the AVX-512 feature bits before handing
 * the registers back.  CPUID runs only while the library initialises, so
 * the timed runs execute none of this.
 *
 * The machine is still not an AVX2 machine (caches, clocks and the width of
 * its load ports stay those of the AVX-512 part); what it gives is both
 * runtimes on their AVX2 kernels on the same cores in the same run.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* CPUID.(EAX=7,ECX=0) bits that announce AVX-512 (Intel SDM vol. 2A). */
#define CAP_L7_EBX_AVX512                                                     \
    ((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) |         \
     (1u << 28) | (1u << 30) | (1u << 31))
#define CAP_L7_ECX_AVX512                                                     \
    ((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14))
#define CAP_L7_EDX_AVX512 ((1u << 2) | (1u << 3) | (1u << 8) | (1u << 23))
/* CPUID.(EAX=7,ECX=1).EAX bit 5: AVX512_BF16. */
#define CAP_L7S1_EAX_AVX512 (1u << 5)

static void cap_on_trap(int sig, siginfo_t *info, void *ctx_) {
    ucontext_t *ctx = ctx_;
    greg_t *r = ctx->uc_mcontext.gregs;
    const uint8_t *rip = (const uint8_t *)r[REG_RIP];
    (void)sig;
    (void)info;
    /* INT3 left RIP after the CC; only our patched pair is ours to handle */
    if (rip[-1] != 0xCC || rip[0] != 0x90) {
        static const char msg[] = "cpuid-cap: unexpected SIGTRAP\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(70);
    }
    unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX];
    unsigned a, b, c, d;
    __cpuid_count(leaf, sub, a, b, c, d);
    if (leaf == 7 && sub == 0) {
        b &= ~CAP_L7_EBX_AVX512;
        c &= ~CAP_L7_ECX_AVX512;
        d &= ~CAP_L7_EDX_AVX512;
    } else if (leaf == 7 && sub == 1) {
        a &= ~CAP_L7S1_EAX_AVX512;
    }
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 1; /* over the NOP */
}

__attribute__((constructor)) static void cap_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = cap_on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);
}
