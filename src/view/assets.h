/* The front end's files (src/view/www/), embedded at build time (cmake/embed-www.cmake). */
#ifndef CP_VIEW_ASSETS_H
#define CP_VIEW_ASSETS_H

#include <stddef.h>

struct cp_web_asset {
	const char *name; /* "index.html", "app.js", ... (no directories) */
	const unsigned char *data;
	size_t len;
};

extern const struct cp_web_asset cp_web_assets[];
extern const size_t cp_web_nassets;

/* The asset called name, or NULL. */
const struct cp_web_asset *cp_web_asset_find(const char *name);
/* Content-Type by the name's extension. */
const char *cp_web_asset_type(const char *name);

#endif
