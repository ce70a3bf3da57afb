#include "view/assets.h"

#include <string.h>

const struct cp_web_asset *cp_web_asset_find(const char *name)
{
	for (size_t i = 0; i < cp_web_nassets; i++)
		if (!strcmp(cp_web_assets[i].name, name))
			return &cp_web_assets[i];
	return NULL;
}

const char *cp_web_asset_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
	    {".html", "text/html; charset=utf-8"},
	    {".js", "text/javascript; charset=utf-8"},
	    {".css", "text/css; charset=utf-8"},
	    {".svg", "image/svg+xml"},
	    {".png", "image/png"},
	    {".json", "application/json; charset=utf-8"},
	};
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}
