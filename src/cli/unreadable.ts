/** Node's file-system error codes in the words `ls` and `cat` use. */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
};

/** `cannot read nope.yml: no such file` for an error reading `file`. */
export function unreadable(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = (code !== undefined ? REASONS[code] : undefined) ?? (error instanceof Error ? error.message : String(error));
  return `cannot read ${file}: ${reason}`;
}
