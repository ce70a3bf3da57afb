/* The probe handler every stub jumps to, and the return trampoline that replaced the
 * return address of a probed call.
 *
 * Both preserve every register but rsp and the flags: GCC's IPA register allocation lets
 * a caller keep values in call-clobbered registers (even r11, xmm8-15) across a call to a
 * callee it knows leaves them alone, so saving only the ABI's argument and return
 * registers breaks -O2 code. The stub pushed the caller's r11 and put the struct
 * cp_probe * in r11 (src/patch/patch.h). */
	.text

/* xmm0-15 to 256 bytes below rsp (rsp moves down over them), and back from there. */
	.macro save_xmm
	sub $256, %rsp
	.irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movups %xmm\n, \n * 16(%rsp)
	.endr
	.endm

	.macro restore_xmm
	.irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movups \n * 16(%rsp), %xmm\n
	.endr
	.endm

/* The call-clobbered general registers but r11 (the return trampoline and the loop
 * handler save those; r11 carries the cookie). */
	.macro push_scratch cfi=0
	.irp r, rax, rcx, rdx, rsi, rdi, r8, r9, r10
	push %\r
	.if \cfi
	.cfi_adjust_cfa_offset 8
	.endif
	.endr
	.endm

	.macro pop_scratch cfi=0
	.irp r, r10, r9, r8, rdi, rsi, rdx, rcx, rax
	pop %\r
	.if \cfi
	.cfi_adjust_cfa_offset -8
	.endif
	.endr
	.endm

	.globl cp_probe_entry
	.hidden cp_probe_entry
	.type cp_probe_entry, @function
	.p2align 4
cp_probe_entry:
	.cfi_startproc
	.cfi_adjust_cfa_offset 8 /* the stub's push of r11 */
	.cfi_offset %r11, -16
	push %rax
	.cfi_adjust_cfa_offset 8
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	push %rcx
	.cfi_adjust_cfa_offset 8
	push %r8
	.cfi_adjust_cfa_offset 8
	push %r9
	.cfi_adjust_cfa_offset 8
	push %r10
	.cfi_adjust_cfa_offset 8
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -88
	push %rbp
	.cfi_adjust_cfa_offset 8
	push %r12
	.cfi_adjust_cfa_offset 8
	push %r13
	.cfi_adjust_cfa_offset 8
	push %r14
	.cfi_adjust_cfa_offset 8
	push %r15
	.cfi_adjust_cfa_offset 8
	/* The stack may be misaligned here (GCC drops the ABI's alignment at calls it
	 * knows need none): realign, keeping the register block's address in rbx. */
	mov %rsp, %rbx
	.cfi_def_cfa_register %rbx
	and $-16, %rsp
	mov %r11, %r12 /* the struct cp_probe * (r12 is saved above) */
	mov %r11, %rdi
	mov %rbx, %rsi
	call cp_probe_enter_fast /* general registers only: no xmm saves needed */
	test %rax, %rax
	jnz 1f
	save_xmm
	mov %r12, %rdi
	mov %rbx, %rsi
	call cp_probe_enter
	mov %rax, %r12
	restore_xmm
	mov %r12, %rax
1:	mov %rax, %r11 /* the trampoline (the caller's r11 is on the stack) */
	mov %rbx, %rsp
	.cfi_def_cfa_register %rsp
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	pop %r10
	pop %r9
	pop %r8
	pop %rcx
	pop %rdx
	pop %rsi
	pop %rdi
	/* rsp -> saved rax, then the stub's r11, then the return address. Jump through
	 * memory 16 bytes below the final rsp (inside the red zone, which the kernel skips
	 * when it delivers a signal) rather than `ret`: the return-stack predictor stays in
	 * step with the program's calls and returns. */
	mov (%rsp), %rax
	mov %r11, (%rsp)
	mov 8(%rsp), %r11
	lea 16(%rsp), %rsp
	jmp *-16(%rsp)
	.cfi_endproc
	.size cp_probe_entry, .-cp_probe_entry

/* Reached by the probed function's ret: rsp = its return-address slot + 8. */
	.globl cp_probe_return
	.hidden cp_probe_return
	.type cp_probe_return, @function
	.p2align 4
	nop /* a return address is looked up at pc - 1: keep that inside this symbol */
cp_probe_return:
	sub $8, %rsp /* the slot again: the real return address goes here */
	push_scratch
	push %r11
	push %rbx
	mov %rsp, %rbx
	and $-16, %rsp
	lea 88(%rbx), %rdi /* the stack pointer after the probed function's ret */
	call cp_probe_leave_fast
	test %rax, %rax
	jnz 2f
	save_xmm
	lea 88(%rbx), %rdi /* the stack pointer after the probed function's ret */
	call cp_probe_leave
	mov %rax, %r11
	restore_xmm
	mov %r11, %rax
2:	mov %rax, 80(%rbx)
	mov %rbx, %rsp
	pop %rbx
	pop %r11
	pop_scratch
	lea 8(%rsp), %rsp
	jmp *-8(%rsp) /* the real return address (in the red zone, safe from signals) */
	.size cp_probe_return, .-cp_probe_return

/* Called by a loop-probe snippet (src/patch/relocate-fn.c): the snippet moved rsp below
 * the red zone, pushed the program's r11 and put the struct cp_loop_edge_rt * in r11.
 * Preserves every register and the flags (cp_loop_event uses general registers only). */
	.globl cp_loop_entry
	.hidden cp_loop_entry
	.type cp_loop_entry, @function
	.p2align 4
cp_loop_entry:
	/* CFI, so that a sample taken in the handler unwinds into the snippet (the unwinder
	 * maps that return address to the edge's original instruction). */
	.cfi_startproc
	pushfq
	.cfi_adjust_cfa_offset 8
	push_scratch 1
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -88
	mov %rsp, %rbx
	.cfi_def_cfa_register %rbx
	and $-16, %rsp
	mov %r11, %rdi
	call cp_loop_event
	mov %rbx, %rsp
	.cfi_def_cfa_register %rsp
	pop %rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	pop_scratch 1
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size cp_loop_entry, .-cp_loop_entry

	.section .note.GNU-stack,"",@progbits
