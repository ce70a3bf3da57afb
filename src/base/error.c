#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char last_message[1024];

int cp_error(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_message, sizeof last_message, fmt, ap);
	va_end(ap);
	return code;
}

int cp_error_prefix(int code, const char *fmt, ...)
{
	char prefix[512], old[sizeof last_message];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, last_message, sizeof old);
	size_t n = strlen(prefix);
	memcpy(last_message, prefix, n + 1);
	if (old[0] && n + 2 < sizeof last_message) {
		memcpy(last_message + n, ": ", 3);
		size_t room = sizeof last_message - n - 3;
		strncat(last_message + n + 2, old, room);
	}
	return code;
}

const char *cp_error_message(void)
{
	return last_message[0] ? last_message : "unknown error";
}

void cp_error_clear(void)
{
	last_message[0] = 0;
}

const char *cp_error_name(int code)
{
	switch (code) {
	case CP_OK:
		return "ok";
	case CP_EINVAL:
		return "invalid argument";
	case CP_ENOMEM:
		return "out of memory";
	case CP_EIO:
		return "I/O error";
	case CP_EFORMAT:
		return "bad file format";
	case CP_ENOTSUP:
		return "not supported";
	case CP_ENOENT:
		return "not found";
	case CP_EPERM:
		return "permission denied";
	case CP_ECHILD:
		return "program failed";
	default:
		return "internal error";
	}
}
