/* The instruction decoder in libcallpath-rt.a: Debian ships Zydis as a shared library only,
 * which a static program cannot link. These stand-ins make every decode fail, so the patch
 * engine refuses every function ("cannot decode") instead of the link failing: in a static
 * program, probes are refused with a reason; sampling, the API and the control channel
 * work. (Linking a static libZydis.a instead of this file would enable probes.) */
#include <Zydis/Zydis.h>

ZyanStatus ZydisDecoderInit(ZydisDecoder *decoder, ZydisMachineMode machine_mode,
			    ZydisStackWidth stack_width)
{
	(void)decoder, (void)machine_mode, (void)stack_width;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisDecoderDecodeFull(const ZydisDecoder *decoder, const void *buffer, ZyanUSize length,
				  ZydisDecodedInstruction *instruction,
				  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT])
{
	(void)decoder, (void)buffer, (void)length, (void)instruction, (void)operands;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisDecoderDecodeInstruction(const ZydisDecoder *decoder, ZydisDecoderContext *context,
					 const void *buffer, ZyanUSize length,
					 ZydisDecodedInstruction *instruction)
{
	(void)decoder, (void)context, (void)buffer, (void)length, (void)instruction;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisDecoderDecodeOperands(const ZydisDecoder *decoder,
				      const ZydisDecoderContext *context,
				      const ZydisDecodedInstruction *instruction,
				      ZydisDecodedOperand *operands, ZyanU8 operand_count)
{
	(void)decoder, (void)context, (void)instruction, (void)operands, (void)operand_count;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisFormatterInit(ZydisFormatter *formatter, ZydisFormatterStyle style)
{
	(void)formatter, (void)style;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisFormatterSetProperty(ZydisFormatter *formatter, ZydisFormatterProperty property,
				     ZyanUPointer value)
{
	(void)formatter, (void)property, (void)value;
	return ZYAN_STATUS_FAILED;
}

ZyanStatus ZydisFormatterFormatInstruction(const ZydisFormatter *formatter,
					   const ZydisDecodedInstruction *instruction,
					   const ZydisDecodedOperand *operands,
					   ZyanU8 operand_count, char *buffer, ZyanUSize length,
					   ZyanU64 runtime_address, void *user_data)
{
	(void)formatter, (void)instruction, (void)operands, (void)operand_count;
	(void)runtime_address, (void)user_data;
	if (length)
		buffer[0] = 0;
	return ZYAN_STATUS_FAILED;
}

const char *ZydisMnemonicGetString(ZydisMnemonic mnemonic)
{
	(void)mnemonic;
	return "?";
}

ZydisRegister ZydisRegisterGetLargestEnclosing(ZydisMachineMode mode, ZydisRegister reg)
{
	(void)mode;
	return reg;
}
