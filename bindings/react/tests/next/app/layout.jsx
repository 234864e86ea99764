// No favicon request: the test counts every failed load as an error.
export const metadata = { title: "likekit-react on Next.js", icons: { icon: "data:," } };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
