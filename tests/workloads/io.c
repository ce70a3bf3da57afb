/* I/O workload with known bytes per calling context (tests/e2e/record-io.sh), on a file
 * in the directory given as argv[1]:
 *   main -> writer_a: write(), 3 MiB in 64 KiB chunks
 *   main -> writer_b: pwrite(), 1 MiB in 16 KiB chunks
 *   main -> writer_v: writev(), 512 KiB as 64 calls of two 4 KiB pieces
 *   main -> fwriter:  fwrite(), 256 KiB in 1 KiB items
 *   main -> reader_c: read(), 2 MiB back in 32 KiB chunks
 *   main -> preader:  pread(), 1 MiB in 8 KiB chunks
 *   main -> freader:  fread(), 128 KiB in 4 KiB items */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[65536];

__attribute__((noinline)) static void writer_a(int fd)
{
	for (int i = 0; i < 48; i++)
		if (write(fd, buf, 65536) != 65536)
			exit(2);
}

__attribute__((noinline)) static void writer_b(int fd)
{
	for (int i = 0; i < 64; i++)
		if (pwrite(fd, buf, 16384, (off_t)i * 16384) != 16384)
			exit(3);
}

__attribute__((noinline)) static void writer_v(int fd)
{
	struct iovec iov[2] = {{buf, 4096}, {buf + 4096, 4096}};
	for (int i = 0; i < 64; i++)
		if (writev(fd, iov, 2) != 8192)
			exit(4);
}

__attribute__((noinline)) static void fwriter(FILE *f)
{
	for (int i = 0; i < 256; i++)
		if (fwrite(buf, 1024, 1, f) != 1)
			exit(5);
}

__attribute__((noinline)) static void reader_c(int fd)
{
	for (int i = 0; i < 64; i++)
		if (read(fd, buf, 32768) != 32768)
			exit(6);
}

__attribute__((noinline)) static void preader(int fd)
{
	for (int i = 0; i < 128; i++)
		if (pread(fd, buf, 8192, (off_t)i * 8192) != 8192)
			exit(7);
}

__attribute__((noinline)) static void freader(FILE *f)
{
	for (int i = 0; i < 32; i++)
		if (fread(buf, 4096, 1, f) != 1)
			exit(8);
}

int main(int argc, char **argv)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/io.dat", argc > 1 ? argv[1] : ".");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof buf);
	writer_a(fd);
	writer_b(fd);
	writer_v(fd);
	lseek(fd, 0, SEEK_SET);
	reader_c(fd);
	preader(fd);
	close(fd);
	FILE *f = fopen(path, "r+");
	if (!f)
		return 1;
	freader(f);
	fseek(f, 0, SEEK_END);
	fwriter(f);
	fclose(f);
	unlink(path);
	return 0;
}
