"""``psp-st push``: upload a model folder to the Hugging Face Hub with a corrected model card (or dry-run)."""

from __future__ import annotations

import argparse

from psp_st.cli import path_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "push",
        help="upload a model folder to the Hugging Face Hub (or --dry-run it to a local folder)",
        description="Upload a model folder (e.g. one written by `psp-st build`) to ORG/NAME with its model card "
        "re-rendered for that repo id. --dry-run OUT writes exactly the files that would be uploaded "
        "to OUT and uploads nothing. Refused: symbolic links, pickle files, in a release (psp_build.json) any file "
        "it does not list but the licence file its recipe's release.license_link names, and a folder lacking that "
        "file. Files already in the repository that the folder lacks are kept (an upload never deletes).",
    )
    parser.add_argument("folder", type=path_argument, help="model folder to upload")
    parser.add_argument("--repo-id", required=True, help="target repository, ORG/NAME")
    parser.add_argument(
        "--dry-run",
        type=path_argument,
        metavar="OUT",
        help="write the files that would be uploaded to OUT (a new folder)",
    )
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument(
        "--token",
        help="Hub token (prefer the HF_TOKEN environment variable or `hf auth login`: a token on the "
        "command line is visible to other users of the machine); never printed or logged",
    )
    parser.add_argument("--commit-message", help="commit message")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from psp_st.hub.push import push, upload_files

    result = push(
        args.folder,
        args.repo_id,
        token=args.token,
        private=args.private,
        dry_run=args.dry_run,
        commit_message=args.commit_message,
    )
    if args.dry_run is not None:
        files = upload_files(args.dry_run)
        print(f"dry run: {len(files)} files that would be uploaded to {args.repo_id} are in {args.dry_run}:")
        for relative in files:
            print(f"  {relative}")
    else:
        print(f"pushed {args.folder} to https://huggingface.co/{args.repo_id} ({result})")
    return 0
